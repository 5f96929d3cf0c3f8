// mcpdb-loadgen: a native MCP load client for side-by-side server benchmarks.
//
//   mcpdb-loadgen [options] -- SERVER_CMD ARGS...          stdio: spawn the server, pipelined ids
//   mcpdb-loadgen --url http://127.0.0.1:P/mcp [options] [-- SERVER_CMD ARGS...]
//                                                          HTTP: C connections, one session each;
//                                                          with a command, the server is spawned
//                                                          too
// Modes: --mode load (default): initialize, warm-up, then N requests at concurrency C;
//        --mode cold: spawn the server R times and time spawn -> initialize answer.
// Protocol: --protocol-version V (default 2025-06-18) is sent in initialize. At 2026-07-28 (or
// later) the client is stateless instead: no initialize nor notifications/initialized; every
// request carries params._meta (io.modelcontextprotocol/protocolVersion,
// io.modelcontextprotocol/clientCapabilities: {} and io.modelcontextprotocol/clientInfo, which
// initialize carried before and which Google's Toolbox requires); over HTTP every POST also carries
// MCP-Protocol-Version, Mcp-Method and, for tools/call, Mcp-Name, and no session id. A
// server/discover request stands where initialize stood (readiness, per HTTP connection, and the
// answer --mode cold times), and every result must carry "resultType":"complete" (else it counts
// as an error of kind result_type).
// Hook: --hook CMD runs `CMD start SERVER_PID` just before the measured phase (over HTTP: before
// the warm-up, which shares the phase's connections) and `CMD end SERVER_PID` just after it,
// waiting for each, so a script can sample the server over exactly that window (bench/ab.sh);
// "hook" in the output says how many answers came between the two.
// Prints one JSON object on stdout. Every loop is bounded by a count and a time limit.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "http_conn.hpp"
#include "jsonrpc_scan.hpp"
#include "proc.hpp"

#include "common/stats.hpp"

namespace mcpdb::bench {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

struct Options {
  std::string mode = "load";
  std::string url;
  std::vector<std::string> command;
  std::string method = "tools/call";
  std::string params = "{}";
  long requests = 1000;
  int concurrency = 1;
  long warmup = 50;
  int repeat = 10;
  double max_seconds = 60;
  long timeout_ms = 10000;
  long settle_ms = 200;
  long ready_timeout_ms = 30000;
  std::string server_stderr = "/dev/null";
  std::string expect;
  std::string label;
  std::string dump;
  std::string bearer;
  std::string protocol_version = "2025-06-18";
  std::string hook;
  pid_t pid = -1;
  bool modern = false;         // 2026-07-28 or later: stateless requests, see the top of the file
  std::string modern_headers;  // the measured request's Mcp-Method / Mcp-Name header lines
};

constexpr const char* kModernVersion = "2026-07-28";

// A YYYY-MM-DD version at or after 2026-07-28 is the stateless protocol.
bool isModernVersion(const std::string& v) {
  return v.size() == 10 && v >= kModernVersion;
}

json modernMeta(const Options& o) {
  return json{
      {"io.modelcontextprotocol/protocolVersion", o.protocol_version},
      {"io.modelcontextprotocol/clientCapabilities", json::object()},
      {"io.modelcontextprotocol/clientInfo", {{"name", "mcpdb-loadgen"}, {"version", "1.0"}}}};
}

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// An Mcp-Name value: as is when it is plain visible ASCII, else in the =?base64?...?= form.
std::string mcpHeaderValue(const std::string& v) {
  bool plain = !v.empty() && v.front() != ' ' && v.back() != ' ' && v.rfind("=?base64?", 0) != 0;
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) plain = false;
  }
  return plain ? v : "=?base64?" + base64(v) + "?=";
}

// The header lines a 2026-07-28 POST of `method` with `params` carries beyond
// MCP-Protocol-Version.
std::string modernHeaders(const std::string& method, const json& params) {
  std::string h = "Mcp-Method: " + method + "\r\n";
  const char* source = method == "tools/call" || method == "prompts/get" ? "name"
                       : method == "resources/read"                      ? "uri"
                                                                         : nullptr;
  if (source != nullptr && params.contains(source) && params[source].is_string())
    h += "Mcp-Name: " + mcpHeaderValue(params[source].get<std::string>()) + "\r\n";
  return h;
}

[[noreturn]] void usage(const std::string& why) {
  std::cerr
      << "mcpdb-loadgen: " << why
      << "\nusage: mcpdb-loadgen [--mode load|cold] [--url http://127.0.0.1:P/mcp] [--pid PID]\n"
         "  [--method M] [--params JSON | --tool NAME [--args JSON]] [--requests N] [--concurrency "
         "C]\n"
         "  [--warmup W] [--repeat R] [--max-seconds S] [--timeout-ms T] [--settle-ms T]\n"
         "  [--server-stderr FILE] [--expect SUBSTRING] [--label TEXT] [--dump FILE] [--bearer "
         "TOKEN]\n  [--protocol-version V] [--hook CMD] [-- CMD ARGS...]\n";
  std::exit(2);
}

Options parseArgs(int argc, char** argv) {
  Options o;
  std::string tool;
  std::string tool_args = "{}";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      for (int j = i + 1; j < argc; ++j) o.command.emplace_back(argv[j]);
      break;
    }
    if (i + 1 >= argc) usage("missing value for " + a);
    const std::string v = argv[++i];
    if (a == "--mode")
      o.mode = v;
    else if (a == "--url")
      o.url = v;
    else if (a == "--pid")
      o.pid = static_cast<pid_t>(std::stol(v));
    else if (a == "--method")
      o.method = v;
    else if (a == "--params")
      o.params = v;
    else if (a == "--tool")
      tool = v;
    else if (a == "--args")
      tool_args = v;
    else if (a == "--requests")
      o.requests = std::stol(v);
    else if (a == "--concurrency")
      o.concurrency = std::stoi(v);
    else if (a == "--warmup")
      o.warmup = std::stol(v);
    else if (a == "--repeat")
      o.repeat = std::stoi(v);
    else if (a == "--max-seconds")
      o.max_seconds = std::stod(v);
    else if (a == "--timeout-ms")
      o.timeout_ms = std::stol(v);
    else if (a == "--settle-ms")
      o.settle_ms = std::stol(v);
    else if (a == "--ready-timeout-ms")
      o.ready_timeout_ms = std::stol(v);
    else if (a == "--server-stderr")
      o.server_stderr = v;
    else if (a == "--expect")
      o.expect = v;
    else if (a == "--label")
      o.label = v;
    else if (a == "--dump")
      o.dump = v;
    else if (a == "--bearer")
      o.bearer = v;
    else if (a == "--hook")
      o.hook = v;
    else if (a == "--protocol-version")
      o.protocol_version = v;
    else
      usage("unknown option " + a);
  }
  if (!tool.empty()) {
    o.method = "tools/call";
    o.params = json{{"name", tool}, {"arguments", json::parse(tool_args)}}.dump();
  } else {
    o.params = json::parse(o.params).dump();  // validate early
  }
  o.modern = isModernVersion(o.protocol_version);
  if (o.modern) {
    json p = json::parse(o.params);
    if (!p.is_object()) usage("--params must be a JSON object at " + o.protocol_version);
    json meta = modernMeta(o);
    if (p.contains("_meta") && p["_meta"].is_object()) meta.update(p["_meta"]);
    p["_meta"] = std::move(meta);
    o.params = p.dump();
    o.modern_headers = modernHeaders(o.method, p);
  }
  if (o.url.empty() && o.command.empty()) usage("give a server command after -- or an --url");
  if (o.requests < 1 || o.requests > 10'000'000) usage("--requests out of range");
  if (o.concurrency < 1 || o.concurrency > 1024) usage("--concurrency out of range");
  if (o.warmup < 0 || o.repeat < 1 || o.repeat > 1000) usage("--warmup/--repeat out of range");
  return o;
}

std::string initializeRequest(const Options& o, long id) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", o.protocol_version},
                {"capabilities", json::object()},
                {"clientInfo", {{"name", "mcpdb-loadgen"}, {"version", "1.0"}}}}}}
      .dump();
}

const std::string kInitialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

// The 2026-07-28 readiness request (where initialize stood).
std::string discoverRequest(const Options& o, long id) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "server/discover"},
              {"params", {{"_meta", modernMeta(o)}}}}
      .dump();
}
const std::string kDiscoverHeaders = "Mcp-Method: server/discover\r\n";

// A 2026-07-28 answer is a result with "resultType":"complete" (a JSON-RPC error is not).
bool modernComplete(const ResponseInfo& info) {
  return info.has_result && !info.rpc_error && info.result_type == R"("complete")";
}

std::string requestText(const Options& o, long id) {
  std::string s = R"({"jsonrpc":"2.0","id":)";
  s += std::to_string(id);
  s += R"(,"method":")";
  s += o.method;
  s += R"(","params":)";
  s += o.params;
  s += '}';
  return s;
}

using mcpdb::bench::summarize;

// Runs `o.hook EDGE SERVER_PID` (its stdout onto our stderr: our stdout is the JSON answer) and
// waits for it; returns its exit status, -1 when it could not run. A no-op without --hook.
int runHook(const Options& o, const char* edge, pid_t server) {
  if (o.hook.empty()) return 0;
  const std::string pid = std::to_string(server);
  std::vector<char*> argv{const_cast<char*>(o.hook.c_str()), const_cast<char*>(edge),
                          const_cast<char*>(pid.c_str()), nullptr};
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, 2, 1);
  pid_t child = -1;
  const int rc = ::posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (::waitpid(child, &status, 0) != child) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

json hookJson(int start_status, int end_status, long calls) {
  return json{{"start_status", start_status}, {"end_status", end_status}, {"calls", calls}};
}

json memoryJson(pid_t pid) {
  if (pid <= 0) return nullptr;
  const Memory m = processTreeMemory(pid);
  return json{{"rss_kb", m.rss_kb}, {"hwm_kb", m.hwm_kb}, {"processes", m.processes}};
}

// ---------------------------------------------------------------------------------------------
// stdio

class StdioClient {
 public:
  explicit StdioClient(Child c) : child_(c) {
    ::fcntl(child_.in_fd, F_SETFL, O_NONBLOCK);
    ::fcntl(child_.out_fd, F_SETFL, O_NONBLOCK);
  }
  Child& child() { return child_; }

  // Queues bytes (a line) for the server.
  void queue(const std::string& line) {
    wbuf_ += line;
    wbuf_ += '\n';
  }
  // Writes what it can, reads what is there, and hands each complete line to `on_line`.
  // False when the server closed its output or the wait timed out.
  template <typename F>
  bool pump(int timeout_ms, F&& on_line) {
    flush();
    pollfd p[2] = {{child_.out_fd, POLLIN, 0},
                   {child_.in_fd, static_cast<short>(wbuf_.empty() ? 0 : POLLOUT), 0}};
    const int r = ::poll(p, 2, timeout_ms);
    if (r < 0) return errno == EINTR;
    if (r == 0) return false;
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      char buf[65536];
      const ssize_t n = ::read(child_.out_fd, buf, sizeof buf);
      if (n == 0) return false;
      if (n > 0) {
        rbuf_.append(buf, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (;;) {
          const auto nl = rbuf_.find('\n', start);
          if (nl == std::string::npos) break;
          on_line(std::string_view(rbuf_).substr(start, nl - start));
          start = nl + 1;
        }
        rbuf_.erase(0, start);
      } else if (errno != EAGAIN && errno != EINTR) {
        return false;
      }
    }
    flush();
    return true;
  }

 private:
  void flush() {
    while (!wbuf_.empty()) {
      const ssize_t n = ::write(child_.in_fd, wbuf_.data(), wbuf_.size());
      if (n <= 0) return;
      wbuf_.erase(0, static_cast<std::size_t>(n));
    }
  }
  Child child_;
  std::string rbuf_;
  std::string wbuf_;
};

// Answers a server-to-client request (e.g. roots/list, ping) so no server waits on us.
void answerServerRequest(StdioClient& c, const ResponseInfo& info) {
  if (info.raw_id.empty()) return;  // a notification
  if (info.method == "\"ping\"") {
    c.queue(std::string(R"({"jsonrpc":"2.0","id":)") + std::string(info.raw_id) +
            R"(,"result":{}})");
  } else if (info.method == "\"roots/list\"") {
    c.queue(std::string(R"({"jsonrpc":"2.0","id":)") + std::string(info.raw_id) +
            R"(,"result":{"roots":[]}})");
  } else {
    c.queue(std::string(R"({"jsonrpc":"2.0","id":)") + std::string(info.raw_id) +
            R"(,"error":{"code":-32601,"message":"not supported by the load client"}})");
  }
}

// Sends `request` (id 0) and waits for its answer line; nullopt when the deadline passes or the
// server exits first.
std::optional<std::string> stdioRoundTrip(StdioClient& c, std::string request,
                                          Clock::time_point deadline) {
  c.queue(std::move(request));
  std::optional<std::string> answer;
  while (!answer && Clock::now() < deadline) {
    const bool ok = c.pump(50, [&](std::string_view line) {
      const ResponseInfo info = scanResponse(line);
      if (info.is_request) return answerServerRequest(c, info);
      if (info.id && *info.id == 0) answer = std::string(line);
    });
    if (!ok && !answer) {
      int status = 0;
      if (::waitpid(c.child().pid, &status, WNOHANG) != 0) break;  // the server exited
    }
  }
  return answer;
}

// Sends initialize and waits for its answer. Returns the answer line, or nullopt.
std::optional<std::string> stdioInitialize(StdioClient& c, const Options& o,
                                           Clock::time_point deadline) {
  auto answer = stdioRoundTrip(c, initializeRequest(o, 0), deadline);
  if (answer) c.queue(kInitialized);
  return answer;
}

// 2026-07-28: sends server/discover and waits for its answer, which must be complete.
bool stdioDiscover(StdioClient& c, const Options& o, Clock::time_point deadline,
                   std::string* error) {
  const auto answer = stdioRoundTrip(c, discoverRequest(o, 0), deadline);
  if (!answer) {
    if (error) *error = "no server/discover answer";
    return false;
  }
  if (!modernComplete(scanResponse(*answer))) {
    if (error) *error = "server/discover: not a complete result: " + answer->substr(0, 300);
    return false;
  }
  return true;
}

// initialize (2025-11-25 and earlier) or server/discover (2026-07-28); true once answered.
bool stdioHandshake(StdioClient& c, const Options& o, Clock::time_point deadline,
                    std::string* error) {
  if (o.modern) return stdioDiscover(c, o, deadline, error);
  if (stdioInitialize(c, o, deadline)) return true;
  if (error) *error = "no initialize answer";
  return false;
}

// Measured requests that did not succeed, by kind; `errors` is their sum.
struct ErrorCounts {
  long http_status = 0;  // an HTTP status other than 200
  long rpc = 0;          // a JSON-RPC error response
  long tool = 0;         // a tool result with isError: true
  long transport = 0;    // no HTTP answer: refused, reset, timed out or garbled
  long result_type = 0;  // 2026-07-28: a result without "resultType":"complete"

  void add(const ErrorCounts& o) {
    http_status += o.http_status;
    rpc += o.rpc;
    tool += o.tool;
    transport += o.transport;
    result_type += o.result_type;
  }
};

struct PhaseResult {
  std::vector<long long> latencies_ns;
  long sent = 0;
  long completed = 0;
  long errors = 0;
  ErrorCounts error_kinds;
  std::string first_error;
  std::string first_response;
  double wall_s = 0;
  bool time_capped = false;
  bool failed = false;
  std::string failure;
};

void noteResponse(PhaseResult& r, std::string_view line, const ResponseInfo& info,
                  const Options& o) {
  if (r.first_response.empty()) r.first_response = std::string(line);
  if (info.rpc_error || info.tool_error) {
    ++r.errors;
    ++(info.rpc_error ? r.error_kinds.rpc : r.error_kinds.tool);
    if (r.first_error.empty()) r.first_error = std::string(line.substr(0, 600));
  } else if (o.modern && !modernComplete(info)) {
    ++r.errors;
    ++r.error_kinds.result_type;
    if (r.first_error.empty())
      r.first_error = "no \"resultType\":\"complete\": " + std::string(line.substr(0, 600));
  }
}

PhaseResult stdioPhase(StdioClient& c, const Options& o, long n, long& next_id, bool record) {
  PhaseResult r;
  const long base = next_id;
  std::vector<Clock::time_point> started(static_cast<std::size_t>(n));
  r.latencies_ns.reserve(static_cast<std::size_t>(n));
  const auto t0 = Clock::now();
  const auto stop_sending = t0 + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(o.max_seconds));
  long inflight = 0;
  auto last_progress = t0;
  while (r.completed < r.sent || r.sent < n) {
    while (inflight < o.concurrency && r.sent < n) {
      if (Clock::now() >= stop_sending) {
        r.time_capped = true;
        n = r.sent;
        break;
      }
      c.queue(requestText(o, base + r.sent));
      started[static_cast<std::size_t>(r.sent)] = Clock::now();
      ++r.sent;
      ++inflight;
    }
    if (r.completed >= r.sent && r.sent >= n) break;
    const bool ok = c.pump(100, [&](std::string_view line) {
      const ResponseInfo info = scanResponse(line);
      if (info.is_request) return answerServerRequest(c, info);
      if (!info.id || *info.id < base || *info.id >= base + r.sent) return;
      const auto now = Clock::now();
      if (record)
        r.latencies_ns.push_back(
            nanosBetween(started[static_cast<std::size_t>(*info.id - base)], now));
      ++r.completed;
      --inflight;
      last_progress = now;
      noteResponse(r, line, info, o);
    });
    if (!ok || Clock::now() - last_progress > milliseconds(o.timeout_ms)) {
      int status = 0;
      const bool exited = ::waitpid(c.child().pid, &status, WNOHANG) != 0;
      if (exited || Clock::now() - last_progress > milliseconds(o.timeout_ms)) {
        r.failed = true;
        r.failure = exited ? "the server exited" : "no response within --timeout-ms";
        break;
      }
    }
  }
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  next_id = base + r.sent;
  return r;
}

json phaseJson(PhaseResult& r, const Options& o) {
  json j{{"sent", r.sent},
         {"completed", r.completed},
         {"errors", r.errors},
         {"error_kinds",
          {{"http_status", r.error_kinds.http_status},
           {"jsonrpc", r.error_kinds.rpc},
           {"tool_is_error", r.error_kinds.tool},
           {"transport", r.error_kinds.transport}}},
         {"wall_s", r.wall_s},
         {"throughput_rps", r.wall_s > 0 ? static_cast<double>(r.completed) / r.wall_s : 0.0},
         {"latency_us", summarize(r.latencies_ns)},
         {"time_capped", r.time_capped}};
  if (o.modern) j["error_kinds"]["result_type"] = r.error_kinds.result_type;
  if (r.failed) j["failure"] = r.failure;
  if (!r.first_error.empty()) j["first_error"] = r.first_error;
  if (!o.expect.empty()) j["expect_ok"] = r.first_response.find(o.expect) != std::string::npos;
  if (!o.dump.empty()) {
    if (FILE* f = std::fopen(o.dump.c_str(), "w")) {
      std::fwrite(r.first_response.data(), 1, r.first_response.size(), f);
      std::fclose(f);
    }
  }
  j["sample_response"] = r.first_response.substr(0, 400);
  return j;
}

int runStdioLoad(const Options& o) {
  SpawnOptions so;
  so.stderr_path = o.server_stderr;
  const auto spawn_at = Clock::now();
  StdioClient c(spawnChild(o.command, so));
  json out{{"label", o.label},
           {"transport", "stdio"},
           {"method", o.method},
           {"concurrency", o.concurrency}};
  if (o.modern) out["protocol_version"] = o.protocol_version;
  std::string error;
  if (!stdioHandshake(c, o, spawn_at + milliseconds(o.ready_timeout_ms), &error)) {
    out["failure"] = error;
    stopChild(c.child(), milliseconds(2000));
    std::cout << out.dump() << "\n";
    return 1;
  }
  out["init_us"] = static_cast<double>(nanosBetween(spawn_at, Clock::now())) / 1000.0;
  // Let the server settle (lazy threads, GC) before reading its idle footprint.
  const auto settle_end = Clock::now() + milliseconds(o.settle_ms);
  while (Clock::now() < settle_end) {
    c.pump(10, [&](std::string_view line) {
      const ResponseInfo info = scanResponse(line);
      if (info.is_request) answerServerRequest(c, info);
    });
  }
  out["rss_idle"] = memoryJson(c.child().pid);
  long next_id = 1;
  if (o.warmup > 0) {
    PhaseResult w = stdioPhase(c, o, o.warmup, next_id, false);
    if (w.failed) out["warmup_failure"] = w.failure;
  }
  const int hook_start = runHook(o, "start", c.child().pid);
  PhaseResult r = stdioPhase(c, o, o.requests, next_id, true);
  const int hook_end = runHook(o, "end", c.child().pid);
  if (!o.hook.empty()) out["hook"] = hookJson(hook_start, hook_end, r.completed);
  out["rss_loaded"] = memoryJson(c.child().pid);
  out["result"] = phaseJson(r, o);
  stopChild(c.child(), milliseconds(2000));
  std::cout << out.dump() << "\n";
  return r.failed ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// HTTP

bool httpInitialize(HttpConn& conn, const Options& o, std::string* error) {
  HttpReply reply;
  if (!conn.post(initializeRequest(o, 0), reply, milliseconds(o.timeout_ms))) {
    if (error) *error = "initialize: no answer";
    return false;
  }
  if (reply.status != 200) {
    if (error)
      *error =
          "initialize: HTTP " + std::to_string(reply.status) + " " + reply.message.substr(0, 300);
    return false;
  }
  conn.session_id = reply.session_id;
  try {
    const json j = json::parse(reply.message);
    conn.protocol_version = j.at("result").at("protocolVersion").get<std::string>();
  } catch (const std::exception&) {
    if (error) *error = "initialize: unexpected answer " + reply.message.substr(0, 300);
    return false;
  }
  HttpReply ack;
  (void)conn.post(kInitialized, ack, milliseconds(o.timeout_ms));
  return true;
}

// 2026-07-28: no session; server/discover with the three headers, answered complete.
bool httpDiscover(HttpConn& conn, const Options& o, std::string* error) {
  conn.protocol_version = o.protocol_version;
  HttpReply reply;
  if (!conn.post(discoverRequest(o, 0), reply, milliseconds(o.timeout_ms), kDiscoverHeaders)) {
    if (error) *error = "server/discover: no answer";
    return false;
  }
  if (reply.status != 200 || !modernComplete(scanResponse(reply.message))) {
    if (error)
      *error = "server/discover: HTTP " + std::to_string(reply.status) + " " +
               reply.message.substr(0, 300);
    return false;
  }
  return true;
}

bool httpHandshake(HttpConn& conn, const Options& o, std::string* error) {
  return o.modern ? httpDiscover(conn, o, error) : httpInitialize(conn, o, error);
}

// Spawns nothing: connects and initializes until the server answers or the deadline passes.
bool waitHttpReady(const Options& o, Clock::time_point deadline, std::string* error) {
  const Url url = parseUrl(o.url);
  while (Clock::now() < deadline) {
    HttpConn conn(url);
    conn.bearer = o.bearer;
    if (conn.connect()) return httpHandshake(conn, o, error);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  if (error) *error = "the HTTP server did not accept a connection in time";
  return false;
}

int runHttpLoad(const Options& o) {
  json out{{"label", o.label},
           {"transport", "http"},
           {"method", o.method},
           {"concurrency", o.concurrency}};
  if (o.modern) out["protocol_version"] = o.protocol_version;
  Child child;
  pid_t pid = o.pid;
  std::string error;
  if (!o.command.empty()) {
    SpawnOptions so;
    so.pipe_stdio = false;
    so.stderr_path = o.server_stderr;
    const auto spawn_at = Clock::now();
    child = spawnChild(o.command, so);
    pid = child.pid;
    if (!waitHttpReady(o, spawn_at + milliseconds(o.ready_timeout_ms), &error)) {
      out["failure"] = error;
      stopChild(child, milliseconds(2000));
      std::cout << out.dump() << "\n";
      return 1;
    }
    out["init_us"] = static_cast<double>(nanosBetween(spawn_at, Clock::now())) / 1000.0;
  }
  const Url url = parseUrl(o.url);
  const int c = o.concurrency;
  std::vector<std::unique_ptr<HttpConn>> conns;
  for (int i = 0; i < c; ++i) {
    conns.push_back(std::make_unique<HttpConn>(url));
    conns.back()->bearer = o.bearer;
    if (!httpHandshake(*conns.back(), o, &error)) {
      out["failure"] = "connection " + std::to_string(i) + ": " + error;
      if (child.pid > 0) stopChild(child, milliseconds(2000));
      std::cout << out.dump() << "\n";
      return 1;
    }
  }
  std::this_thread::sleep_for(milliseconds(o.settle_ms));
  out["rss_idle"] = memoryJson(pid);

  std::atomic<long> next{0};
  std::atomic<bool> stop{false};
  const long total = o.warmup + o.requests;
  std::mutex mu;
  PhaseResult r;
  std::atomic<Clock::rep> measure_start{0};
  std::atomic<long> done{0};
  std::atomic<long> answered{0};  // warm-up included: the hook's window holds both
  const int hook_start = runHook(o, "start", pid);
  const auto t0 = Clock::now();
  const auto stop_sending = t0 + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(o.max_seconds));
  auto worker = [&](HttpConn& conn) {
    std::vector<long long> lat;
    PhaseResult mine;
    HttpReply reply;
    int failures_in_a_row = 0;
    for (;;) {
      if (stop.load()) break;
      const long i = next.fetch_add(1);
      if (i >= total) break;
      if (Clock::now() >= stop_sending) {
        mine.time_capped = true;
        break;
      }
      if (i == o.warmup) measure_start.store(Clock::now().time_since_epoch().count());
      const auto s = Clock::now();
      const bool ok =
          conn.post(requestText(o, i + 1), reply, milliseconds(o.timeout_ms), o.modern_headers);
      const auto e = Clock::now();
      if (ok) answered.fetch_add(1);
      if (!ok) {
        // A transport error counts against this request; the connection reconnects for the next
        // one. Many in a row mean the server is gone: the run fails.
        const std::string what = "request " + std::to_string(i + 1) + ": no HTTP answer";
        if (i >= o.warmup) {
          ++mine.sent;
          ++mine.errors;
          ++mine.error_kinds.transport;
          if (mine.first_error.empty()) mine.first_error = what;
        }
        if (++failures_in_a_row >= 20) {
          mine.failed = true;
          mine.failure = what + " (20 in a row)";
          stop.store(true);
          break;
        }
        continue;
      }
      failures_in_a_row = 0;
      if (i < o.warmup) continue;
      ++mine.sent;
      ++mine.completed;
      lat.push_back(nanosBetween(s, e));
      if (reply.status != 200) {
        ++mine.errors;
        ++mine.error_kinds.http_status;
        if (mine.first_error.empty())
          mine.first_error =
              "HTTP " + std::to_string(reply.status) + " " + reply.message.substr(0, 400);
        if (mine.first_response.empty()) mine.first_response = reply.message;
      } else {
        const ResponseInfo info = scanResponse(reply.message);
        if (info.id) {
          noteResponse(mine, reply.message, info, o);
        } else {
          // A 200 that carries no JSON-RPC response (empty, or a stream without one).
          ++mine.errors;
          ++mine.error_kinds.rpc;
          if (mine.first_error.empty())
            mine.first_error =
                "HTTP 200 without a JSON-RPC response: " + reply.message.substr(0, 400);
          if (mine.first_response.empty()) mine.first_response = reply.message;
        }
      }
      done.fetch_add(1);
    }
    std::lock_guard<std::mutex> lock(mu);
    r.latencies_ns.insert(r.latencies_ns.end(), lat.begin(), lat.end());
    r.sent += mine.sent;
    r.completed += mine.completed;
    r.errors += mine.errors;
    r.error_kinds.add(mine.error_kinds);
    r.time_capped = r.time_capped || mine.time_capped;
    if (mine.failed && !r.failed) {
      r.failed = true;
      r.failure = mine.failure;
    }
    if (r.first_error.empty()) r.first_error = mine.first_error;
    if (r.first_response.empty()) r.first_response = mine.first_response;
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < c; ++i)
    threads.emplace_back(worker, std::ref(*conns[static_cast<std::size_t>(i)]));
  for (auto& t : threads) t.join();
  const auto end = Clock::now();
  const int hook_end = runHook(o, "end", pid);
  if (!o.hook.empty()) out["hook"] = hookJson(hook_start, hook_end, answered.load());
  const auto ms = measure_start.load();
  const auto start = ms != 0 ? Clock::time_point(Clock::duration(ms)) : t0;
  r.wall_s = std::chrono::duration<double>(end - start).count();
  out["rss_loaded"] = memoryJson(pid);
  out["result"] = phaseJson(r, o);
  conns.clear();
  if (child.pid > 0) stopChild(child, milliseconds(2000));
  std::cout << out.dump() << "\n";
  return r.failed ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// cold start

int runCold(const Options& o) {
  if (o.command.empty()) usage("--mode cold needs a server command after --");
  json out{{"label", o.label}, {"transport", o.url.empty() ? "stdio" : "http"}, {"mode", "cold"}};
  if (o.modern) out["protocol_version"] = o.protocol_version;
  std::vector<long long> ns;
  json failures = json::array();
  json rss = json::array();
  const auto budget_end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(o.max_seconds));
  for (int i = 0; i < o.repeat && Clock::now() < budget_end; ++i) {
    SpawnOptions so;
    so.stderr_path = o.server_stderr;
    so.pipe_stdio = o.url.empty();
    const auto spawn_at = Clock::now();
    Child child = spawnChild(o.command, so);
    bool ok = false;
    std::string error;
    if (o.url.empty()) {
      StdioClient c(child);
      ok = stdioHandshake(c, o, spawn_at + milliseconds(o.ready_timeout_ms), &error);
      const auto t = Clock::now();
      if (ok) ns.push_back(nanosBetween(spawn_at, t));
      if (ok && i == 0) {
        std::this_thread::sleep_for(milliseconds(o.settle_ms));
        rss.push_back(memoryJson(c.child().pid));
      }
      stopChild(c.child(), milliseconds(2000));
    } else {
      ok = waitHttpReady(o, spawn_at + milliseconds(o.ready_timeout_ms), &error);
      const auto t = Clock::now();
      if (ok) ns.push_back(nanosBetween(spawn_at, t));
      if (ok && i == 0) {
        std::this_thread::sleep_for(milliseconds(o.settle_ms));
        rss.push_back(memoryJson(child.pid));
      }
      stopChild(child, milliseconds(2000));
    }
    if (!ok) failures.push_back(error);
    // Let the port / process table settle before the next start.
    std::this_thread::sleep_for(milliseconds(20));
  }
  std::vector<long long> copy = ns;
  json s = summarize(copy);
  out["cold_start_us"] = s;
  out["runs"] = ns.size();
  out["failures"] = failures;
  if (!rss.empty()) out["rss_idle"] = rss[0];
  std::cout << out.dump() << "\n";
  return ns.empty() ? 1 : 0;
}

}  // namespace
}  // namespace mcpdb::bench

int main(int argc, char** argv) {
  using namespace mcpdb::bench;
  ::signal(SIGPIPE, SIG_IGN);
  try {
    const Options o = parseArgs(argc, argv);
    if (o.mode == "cold") return runCold(o);
    if (o.mode != "load") usage("unknown --mode " + o.mode);
    return o.url.empty() ? runStdioLoad(o) : runHttpLoad(o);
  } catch (const std::exception& e) {
    std::cerr << "mcpdb-loadgen: " << e.what() << "\n";
    return 1;
  }
}
