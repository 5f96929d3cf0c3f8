#!/usr/bin/env node
// A MongoDB wire-protocol (OP_MSG) test server for local integration tests and the demo:
// CongoServer from @push.rocks/smartmongo (in-memory). Started and stopped by scripts/servers.sh.
//
//   node tools/congo-server.mjs [--host 127.0.0.1] [--port 27217]
//
// Prints one "ready" line on stdout once listening; exits 0 on SIGTERM/SIGINT after closing,
// 1 on any startup error (e.g. the port is taken). It has no authentication: bind it to loopback.
// The package root pulls in dependencies that cannot be installed, so import the congodb entry.
import { CongoServer } from './node_modules/@push.rocks/smartmongo/dist_ts/congodb/index.js';

function parseArgs(argv) {
  const opts = { host: '127.0.0.1', port: 27217 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = argv[i + 1];
    if (arg === '--host' && value !== undefined) {
      opts.host = value;
      i++;
    } else if (arg === '--port' && value !== undefined) {
      opts.port = Number(value);
      i++;
    } else {
      throw new Error(`unknown argument: ${arg} (usage: congo-server.mjs [--host H] [--port P])`);
    }
  }
  if (!Number.isInteger(opts.port) || opts.port < 1 || opts.port > 65535) {
    throw new Error(`invalid port: ${opts.port}`);
  }
  return opts;
}

const log = (msg) => process.stderr.write(`[congo] ${new Date().toISOString()} ${msg}\n`);

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (err) {
  log(err.message);
  process.exit(2);
}

const server = new CongoServer({ host: opts.host, port: opts.port, storage: 'memory' });

// CongoServer's hello answer carries a topologyVersion (with a new processId each time) but
// answers at once. Drivers take a topologyVersion to mean the server supports awaitable hello,
// so their monitors send the next hello as soon as the answer arrives: libmongoc's monitor thread
// sent about 2,300 hellos a second and kept this server at half a core while idle, which skewed
// every benchmark that shared the machine. Without a topologyVersion the drivers poll, as they do
// against servers before MongoDB 4.4 (every heartbeatFrequencyMS, 10 s by default).
for (const name of ['hello', 'ismaster', 'isMaster']) {
  const handler = server.commandRouter?.handlers?.get(name);
  if (!handler) throw new Error(`CongoServer has no '${name}' handler to adjust (was the package upgraded?)`);
  if (handler.mcpdbPolling) continue;  // the three names share one handler
  const original = handler.handle.bind(handler);
  handler.handle = async (context) => {
    const response = await original(context);
    delete response.topologyVersion;
    return response;
  };
  handler.mcpdbPolling = true;
}
let stopping = false;

async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  log(`${signal}: stopping`);
  // Never hang on a stuck client: exit anyway after a short grace period.
  const timer = setTimeout(() => {
    log('stop timed out; exiting');
    process.exit(0);
  }, 3000);
  timer.unref();
  try {
    await server.stop();
  } catch (err) {
    log(`stop failed: ${err && err.message}`);
  }
  log('stopped');
  process.exit(0);
}

process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('uncaughtException', (err) => {
  log(`uncaught exception: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});
process.on('unhandledRejection', (err) => {
  log(`unhandled rejection: ${err && err.stack ? err.stack : err}`);
  process.exit(1);
});

try {
  await server.start();
} catch (err) {
  log(`failed to start on ${opts.host}:${opts.port}: ${err && err.message}`);
  process.exit(1);
}
log(`pid ${process.pid} listening on ${server.host}:${server.port}`);
process.stdout.write(`ready mongodb://${server.host}:${server.port}\n`);
