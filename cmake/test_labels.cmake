# The tests' labels, for `ctest -L`/`-LE` (scripts/test --fast runs the tests labelled neither
# server nor slow, in well under a minute):
#
#   unit      a test of ratelab's own code (a GoogleTest binary other than property_tests, a
#             check of the sources, or a fuzzer's short run, which is slow too)
#   property  a RapidCheck property (property-tests/)
#   server    it starts a real Redis, PostgreSQL, nginx or node app, or `ratelab serve` as a
#             process of its own
#   slow      it takes over half a second alone on a two-core machine, with no server
#
# Every test has unit or property, and server or slow where it is one. A test that is not named
# here is fast and needs nothing: it runs in --fast. The test `test_labels_check` fails when a
# name here is no test's (a test renamed loses its label otherwise).
#
# Entries are a test's full name (Suite.Test) or a whole suite (Suite.*).
cmake_policy(VERSION 3.25)  # CTest reads this file with no policies set (IN_LIST wants them)
set(RATELAB_SERVER_TESTS
  AdminApi.CreatesListsReplacesAndDeletesRulesInPostgresql
  HostileClient.*
  KvEquivalenceTest.*
  PostgresPoolTest.*
  PostgresRules.*
  PostgresStore.AnExistingDatabaseMustBeEmptyOfRatelabsRowsAndCannotBeRestarted
  PostgresStore.EachSqlProtocolsVerdict
  PostgresStore.RowsPastTheirExpiryAreListedForTheKeyExpiryCheck
  PostgresStore.SqlProtocolsDecideAsTheirAlgorithmAndTheSameSeedGivesTheSameHistory
  PostgresStore.StressRunsTheSqlProtocolsFromThreads
  PostgresStore.TheKeyExpiryCheckFindsTheRowsOfAProtocolThatNeverSweeps
  StoreDrivers.ARedisRequiredEmptyIsRefusedWhenItHoldsAKeyAndEmptiedAfter
  StoreDrivers.APostgresqlRequiredEmptyIsRefusedWhenRatelabsTablesHoldARowAndEmptiedAfter
  PostgresTest.AKilledServerIsUnavailableAndAfterARestartStatementsRunAgain
  PostgresTest.AStatementPastTheTimeoutIsDeadlineExceeded
  PostgresTest.DurabilityNoneLosesUnloggedTablesAtARestartAndEverysecKeepsWhatWasWritten
  PostgresTest.StatementsRunPreparedWithTheirParametersAndErrorsAreAnswers
  PostgresTest.StopAndTheDestructorLeaveNoProcessOrDirBehind
  PostgresTest.TheNextStartCleansUpAfterAProcessKilledOutright
  Probe.ARacyProtocolBehindServeIsFoundOverHttpAndTheAtomicOneIsNot
  Probe.ServeWithEachAlgorithmOnEachStoreIsNotAccused
  ProbeCommand.ExpressRateLimitWithItsMemoryStore
  ProbeCommand.ExpressRateLimitWithRateLimitRedis
  RateLimitServer.ARuleTheStoreCannotEnforceIsRefusedAtTheStart
  RateLimitServer.RulesAndCountersOnAPrivatePostgresqlShareOneServer
  RateLimitServer.AStalledPostgresqlCostsEachDecisionItsTimeout
  RateLimitServer.AStalledRedisCostsEachDecisionItsTimeout
  RateLimitServer.AStalledRulesStoreCostsTheAdminApiNoMoreThanItsTimeout
  RateLimitServer.CountersInPostgresqlOutliveTheServer
  RateLimitServer.CountersInRedisOutliveTheServer
  RateLimitServer.OnPostgresParallelHitsOnSeveralConnectionsAreEachCountedOnce
  RateLimitServer.OnRedisAThreadServesOtherConnectionsWhileItsRoundIsOut
  RateLimitServer.OnRedisParallelHitsPipelinedAreEachCountedOnce
  RateLimitServer.TheAdminApiRefusesARuleTheCountersStoreCannotEnforce
  RedisCluster.*
  RedisKvTest.PipelineAnswersInOrder
  RedisKvTest.ReconnectsAfterTheServerRestarts
  RedisKvTest.RepliesOfEveryType
  RedisPipelineTest.*
  RedisServerTest.KillKeepsWhatTheDurabilityKeeps
  RedisServerTest.RemovesItsDirectory
  RedisServerTest.ScriptsAreForgottenOnRestart
  RedisServerTest.TheNextStartCleansUpAfterAProcessKilledOutright
  RedisServerTest.VirtualClockIsTheServersWallClock
  RedisStore.AScriptIsTriedOnTheStoreItWillRunOn
  RedisStore.AnExistingServerMustBeEmptyAndCannotBeRestarted
  RedisStore.EveryKvProtocolsVerdictIsTheSameAsOnMemoryKv
  RedisStore.SameSeedSameHistoryAsOnMemoryKv
  RedisStore.TheCheckingCommandsRunOnARedisCluster
  ReplicaFailover.*
  RulesCommand.ImportsIntoPostgresAndExportsTheSameRules
  ScriptCorpus.NoScriptIsRefusedOnARealRedisServerWhereEachFindingReplays
  ServeCommand.*
  Stress.AScriptThatFailsIsAFailureNotAVerdict
  Stress.AnAnchoredWindowIsJudgedOnWallClockIntervals
  Stress.BringYourOwnLua
  Stress.CtrlCStopsItCleanlyAndSaysWhatWasMeasured
  Stress.RunsOnAGivenServerOnlyWhenItsDatabaseIsEmpty
  Stress.TheAtomicScriptsKeepTheirPromiseUnderRealConcurrency
  Stress.TheReadThenWriteTokenBucketSpendsTheSameTokensTwice
)
set(RATELAB_SLOW_TESTS
  BehaviourPins.CheckFindsTheSameMinimalWitnesses
  Check.CorrectProtocolsKeepTheirPromisesOverManySeeds
  Compare.WritesEveryViewForEveryExampleScenario
  HttpServer.AConnectionPastItsTimeoutIsClosedAndNotBefore
  InProcessLimiter.AFullLimiterDropsItsLeastRecentlyUsedKeys
  KeyEncoding.EveryKeyOfARequestHashesToTheSlotOfItsLimiterKey
  Linearizability.ALoadedMachinesProbeRaceIsDecidedWithinTheBudget
  Plots.GnuplotPastItsLimitIsStoppedWithItsWholeGroup
  Probe.ARetryAfterLongerOrShorterThanTheWaitIsCaught
  Probe.AnHonestRetryAfterIsRetriedEarlyAndOnTimeAndNotAccused
  Probe.ServeKeepsTheHitCountersPromiseOverHttp
  Probe.TheBoundaryTrafficFindsTheFixedWindowsDoubleAndNotTheSlidingLogs
  Probe.TheRateCapHoldsABurstToItsRate
  ScriptCorpus.EveryScriptGetsTheVerdictItsEntryExpects
  Stress.OnTheInMemoryStoreEveryKindOfProtocolRunsFromThreads
  Worst.ARacyBucketsBreachGrowsWithConcurrencyAndAnAtomicOneHasNone
  Worst.FindsTheLongestRunOfFalseDenialsAndNoneInACorrectLog
  WorstCommand.PrintsTheWorstAtEachConcurrencyWithAWitnessAndTheCommandAgain
)

# Whether the test `name` is in `table` (a list of the entries above); sets `out`.
function(ratelab_test_listed name table out)
  string(REGEX REPLACE "[.].*" "" suite "${name}")
  string(REGEX REPLACE " .*" "" bare "${name}")  # a parameterized test's name ends in a comment
  set(found FALSE)
  if("${bare}" IN_LIST table OR "${suite}.*" IN_LIST table)
    set(found TRUE)
  endif()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# At CTest's start, once per test binary (cmake/ratelab.cmake): labels each of the binary's
# tests, RATELAB_LABELS_TESTS, given its kind, RATELAB_LABELS_KIND (unit or property).
if(DEFINED RATELAB_LABELS_TESTS)
  foreach(test IN LISTS RATELAB_LABELS_TESTS)
    set(labels ${RATELAB_LABELS_KIND})
    ratelab_test_listed("${test}" "${RATELAB_SERVER_TESTS}" server)
    ratelab_test_listed("${test}" "${RATELAB_SLOW_TESTS}" slow)
    if(server)
      list(APPEND labels server)
    elseif(slow)
      list(APPEND labels slow)
    endif()
    set_tests_properties("${test}" PROPERTIES LABELS "${labels}")
  endforeach()
endif()
