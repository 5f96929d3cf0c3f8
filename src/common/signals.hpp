#pragma once
// Turns SIGINT/SIGTERM (and SIGHUP) into readable bytes on a pipe so event loops can poll() for
// them next to their input: the self-pipe pattern (signal handlers may only write()).

namespace mcpdb {

enum class SignalKind : char { Terminate = 'T', Reload = 'H' };

// Installs the handlers once and returns the read end of the pipe (non-blocking). Also ignores
// SIGPIPE so a closed client shows up as a write error, not a dead process.
int installSignalPipe();

}  // namespace mcpdb
