// An Express app as its users write one: express-rate-limit in front of a route, keyed by the
// user the client names, with its memory store or rate-limit-redis on a Redis.
//   PORT=0 LIMIT=5 WINDOW_MS=60000 HEADERS=draft-6|draft-7|draft-8 \
//     STORE=memory|redis REDIS_URL=redis://... (or REDIS_SOCKET=/path/redis.sock) node app.js
// It prints "listening on PORT" once it listens, and stops on SIGTERM.
const express = require('express');
const { rateLimit } = require('express-rate-limit');

async function main() {
  const limit = Number(process.env.LIMIT || 5);
  const windowMs = Number(process.env.WINDOW_MS || 60000);
  let store;
  let client;
  if (process.env.STORE === 'redis') {
    const { createClient } = require('redis');
    const { RedisStore } = require('rate-limit-redis');
    client = process.env.REDIS_SOCKET
      ? createClient({ socket: { path: process.env.REDIS_SOCKET } })
      : createClient({ url: process.env.REDIS_URL });
    await client.connect();
    store = new RedisStore({ sendCommand: (...args) => client.sendCommand(args) });
  }
  const app = express();
  app.use(express.json());
  app.use(rateLimit({
    windowMs,
    limit,
    standardHeaders: process.env.HEADERS || 'draft-7',
    legacyHeaders: true,
    keyGenerator: (req) => req.get('X-User') || req.ip,
    store,
  }));
  app.all('/hit', (req, res) => res.json({ ok: true }));
  const server = app.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
    console.log(`listening on ${server.address().port}`);
  });
  process.on('SIGTERM', () => {
    server.close();
    if (client) client.quit();
    process.exit(0);
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
