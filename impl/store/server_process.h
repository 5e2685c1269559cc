// What the private servers ratelab starts (redis-server, PostgreSQL) share: spawning one with its
// output in a log, a temp dir that names its owner, and cleaning up after owners that died.
#ifndef RATELAB_IMPL_STORE_SERVER_PROCESS_H_
#define RATELAB_IMPL_STORE_SERVER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

// Starts `args` (args[0] found on PATH) with stdin from /dev/null and stdout and stderr appended
// to `log`, in environment `env` (KEY=VALUE strings; null: this process's), in a process group of
// its own (the terminal's Ctrl-C reaches ratelab, which stops its servers itself): its pid, or
// Unavailable naming the program.
Result<pid_t> SpawnLogged(std::vector<std::string> args, const std::vector<std::string>* env,
                          const std::string& log);

// Says whether `program` is on PATH.
bool OnPath(const std::string& program);

// TMPDIR, or /tmp.
std::string TempRoot();

// Whether process `pid` exists (a zombie counts).
bool ProcessAlive(pid_t pid);

// The last lines of the file at `path`, each on a line of its own, indented: for error messages.
std::string LogTail(const std::string& path);

// A fresh dir TempRoot()/<prefix>XXXXXX for a server; InternalError if it cannot be made.
Result<std::string> MakeServerDir(std::string_view prefix);

// Records in `dir` that this process owns the server `server` working there, for
// RemoveAbandonedServers.
void WriteServerOwner(const std::string& dir, pid_t server);

// Cleans up after ratelab processes that died without stopping their servers (kill -9, a crash):
// every <prefix>* dir under `root` whose owner process is gone is removed, and its server's
// process group killed if the server (a process whose command line names `program` and the dir)
// still runs there. Dirs of live processes, and dirs without an owner file, are left alone.
// Returns how many dirs it removed.
int RemoveAbandonedServers(const std::string& root, std::string_view prefix,
                           std::string_view program);

// Stops (SIGSTOP) or continues (SIGCONT) every process of the server whose group `pid` leads:
// a stalled machine, whose connections stay open and answer nothing.
Status PauseServer(pid_t pid, bool pause, std::string_view program);

// Sends `signal` to process `pid`'s whole group (a server and the processes it forked), and waits
// for `pid` to exit.
Status SignalServerAndWait(pid_t pid, int signal, std::string_view program);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_SERVER_PROCESS_H_
