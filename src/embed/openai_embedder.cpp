#include "embed/openai_embedder.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <thread>

#include "common/json.hpp"

namespace mcpdb::embed {
namespace {

constexpr std::size_t kMaxDimension = 65536;

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A short identifier from an error body ("rate_limit_exceeded"), or empty: free text is never
// echoed because providers quote keys and inputs in their messages.
std::string safeErrorCode(const std::string& body) {
  Json doc = Json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return {};
  auto err = doc.find("error");
  if (err == doc.end() || !err->is_object()) return {};
  for (const char* key : {"code", "type"}) {
    auto it = err->find(key);
    if (it == err->end() || !it->is_string()) continue;
    const auto& s = it->get_ref<const std::string&>();
    const bool ident = !s.empty() && s.size() <= 48 && std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '-' || c == '.';
    });
    if (ident) return s;
  }
  return {};
}

std::chrono::milliseconds retryAfter(const HttpResponse& r) {
  auto v = r.header("retry-after");
  if (!v) return std::chrono::milliseconds(0);
  long long seconds = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), seconds);
  if (ec != std::errc() || p != v->data() + v->size() || seconds < 0)
    return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(std::min<long long>(seconds, 3600) * 1000);
}

bool retryableStatus(long status) {
  return status == 429 || (status >= 500 && status <= 599);
}

}  // namespace

std::string resolveEmbeddingsUrl(std::string_view url) {
  std::string u(url);
  while (!u.empty() && u.back() == '/') u.pop_back();
  if (endsWith(u, "/embeddings")) return u;
  if (endsWith(u, "/v1")) return u + "/embeddings";
  return u + "/v1/embeddings";
}

OpenAiEmbedder::OpenAiEmbedder(OpenAiOptions options)
    : options_(std::move(options)),
      modelId_("openai:" + options_.model + ":" + std::to_string(options_.dimension)),
      where_(redactUrl(options_.url)) {
  if (!options_.sleep)
    options_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
}

Result<std::unique_ptr<OpenAiEmbedder>> OpenAiEmbedder::create(OpenAiOptions options) {
  if (options.url.rfind("http://", 0) != 0 && options.url.rfind("https://", 0) != 0) {
    return makeError(Code::FailedPrecondition,
                     "embedding.url (MCPDB_EMBED_URL) must be an http:// or https:// URL");
  }
  if (options.model.empty()) {
    return makeError(Code::FailedPrecondition,
                     "embedding.model (MCPDB_EMBED_MODEL) must be set for provider openai");
  }
  if (options.dimension == 0 || options.dimension > kMaxDimension) {
    return makeError(
        Code::FailedPrecondition,
        "embedding.dimension (MCPDB_EMBED_DIMENSION) must be set to the model's vector width "
        "(1.." +
            std::to_string(kMaxDimension) + ") for provider openai");
  }
  if (options.maxRetries < 0 || options.maxRetries > 10) {
    return makeError(Code::FailedPrecondition, "embedding.max_retries must be between 0 and 10");
  }
  if (options.maxBatch == 0) options.maxBatch = 1;
  return std::unique_ptr<OpenAiEmbedder>(new OpenAiEmbedder(std::move(options)));
}

std::unique_ptr<HttpClient> OpenAiEmbedder::acquireClient() const {
  {
    std::lock_guard lock(poolMutex_);
    if (!pool_.empty()) {
      auto c = std::move(pool_.back());
      pool_.pop_back();
      return c;
    }
  }
  HttpClientOptions o;
  o.connectTimeout = options_.connectTimeout;
  o.totalTimeout = options_.timeout;
  return std::make_unique<HttpClient>(o);
}

void OpenAiEmbedder::releaseClient(std::unique_ptr<HttpClient> client) const {
  std::lock_guard lock(poolMutex_);
  if (pool_.size() < 16) pool_.push_back(std::move(client));
}

Result<std::vector<Vector>> OpenAiEmbedder::embed(std::span<const std::string> texts) const {
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (texts[i].size() > options_.maxInputBytes) {
      return makeError(Code::InvalidArgument, "text " + std::to_string(i) + " is longer than " +
                                                  std::to_string(options_.maxInputBytes) +
                                                  " bytes");
    }
  }
  std::vector<Vector> out;
  out.reserve(texts.size());
  for (std::size_t i = 0; i < texts.size(); i += options_.maxBatch) {
    auto part = embedBatch(texts.subspan(i, std::min(options_.maxBatch, texts.size() - i)));
    if (!part.ok()) return part.error();
    for (auto& v : *part) out.push_back(std::move(v));
  }
  return out;
}

Result<std::vector<Vector>> OpenAiEmbedder::embedBatch(std::span<const std::string> texts) const {
  if (texts.empty()) return std::vector<Vector>{};
  Json body = {{"model", options_.model}, {"input", Json::array()}, {"encoding_format", "float"}};
  for (const auto& t : texts) body["input"].push_back(t);
  if (options_.sendDimensions) body["dimensions"] = options_.dimension;

  HttpRequest req;
  req.method = "POST";
  req.url = options_.url;
  req.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
  if (!options_.apiKey.empty())
    req.headers.emplace_back("Authorization", "Bearer " + options_.apiKey);
  // Invalid UTF-8 in a text is replaced rather than failing the whole batch.
  req.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  req.totalTimeout = options_.timeout;
  req.connectTimeout = options_.connectTimeout;

  auto client = acquireClient();
  HttpResponse resp;
  std::chrono::milliseconds backoff = options_.initialBackoff;
  for (int attempt = 0;; ++attempt) {
    auto r = client->send(req);
    const bool last = attempt >= options_.maxRetries;
    if (!r.ok()) {
      // Connection-level failures are worth another try; timeouts are not (they would multiply
      // the caller's wait), nor are cancellations or bad URLs.
      if (r.error().code != Code::Unavailable || last) {
        return makeError(r.error().code, "embedding endpoint: " + r.error().message);
      }
    } else if (retryableStatus(r->status) && !last) {
      backoff = std::max(backoff, retryAfter(*r));
    } else {
      resp = std::move(r.value());
      break;
    }
    options_.sleep(std::min(backoff, options_.maxBackoff));
    backoff = std::min(backoff * 2, options_.maxBackoff);
  }
  releaseClient(std::move(client));

  const std::string status = "HTTP " + std::to_string(resp.status);
  if (resp.status != 200) {
    const std::string code = safeErrorCode(resp.body);
    const std::string detail = status + (code.empty() ? "" : ", " + code);
    if (resp.status == 401 || resp.status == 403) {
      return makeError(Code::PermissionDenied, "embedding endpoint " + where_ +
                                                   " refused the credentials (" + detail +
                                                   "); check MCPDB_EMBED_API_KEY");
    }
    if (resp.status == 429) {
      return makeError(Code::ResourceExhausted,
                       "embedding endpoint " + where_ + " is rate limiting (" + detail +
                           ") after " + std::to_string(options_.maxRetries + 1) + " attempts");
    }
    if (resp.status >= 500) {
      return makeError(Code::Unavailable, "embedding endpoint " + where_ + " failed (" + detail +
                                              ") after " + std::to_string(options_.maxRetries + 1) +
                                              " attempts");
    }
    if (resp.status == 404) {
      return makeError(Code::FailedPrecondition, "embedding endpoint " + where_ +
                                                     " has no such path (" + detail +
                                                     "); check embedding.url / MCPDB_EMBED_URL");
    }
    return makeError(Code::InvalidArgument,
                     "embedding endpoint " + where_ + " rejected the request (" + detail + ")");
  }

  Json doc = Json::parse(resp.body, nullptr, false);
  const std::string malformed = "embedding endpoint " + where_ + " sent a malformed response";
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("data") || !doc["data"].is_array()) {
    return makeError(Code::Unavailable, malformed);
  }
  const Json& data = doc["data"];
  if (data.size() != texts.size()) {
    return makeError(Code::Unavailable, malformed + " (" + std::to_string(data.size()) +
                                            " vectors for " + std::to_string(texts.size()) +
                                            " texts)");
  }
  std::vector<Vector> out(texts.size());
  std::vector<bool> seen(texts.size(), false);
  for (std::size_t i = 0; i < data.size(); ++i) {
    const Json& item = data[i];
    if (!item.is_object() || !item.contains("embedding") || !item["embedding"].is_array()) {
      return makeError(Code::Unavailable, malformed);
    }
    std::size_t index = i;
    if (item.contains("index")) {
      if (!item["index"].is_number_unsigned() || item["index"].get<std::size_t>() >= texts.size()) {
        return makeError(Code::Unavailable, malformed + " (bad index)");
      }
      index = item["index"].get<std::size_t>();
    }
    if (seen[index]) return makeError(Code::Unavailable, malformed + " (duplicate index)");
    seen[index] = true;
    const Json& emb = item["embedding"];
    if (emb.size() != options_.dimension) {
      return makeError(Code::FailedPrecondition,
                       "embedding endpoint returned " + std::to_string(emb.size()) +
                           "-dimensional vectors but embedding.dimension is " +
                           std::to_string(options_.dimension) + " (model " + options_.model + ")");
    }
    Vector& v = out[index];
    v.resize(emb.size());
    double sq = 0;
    for (std::size_t j = 0; j < emb.size(); ++j) {
      if (!emb[j].is_number())
        return makeError(Code::Unavailable, malformed + " (non-numeric component)");
      const double x = emb[j].get<double>();
      if (!std::isfinite(x))
        return makeError(Code::Unavailable, malformed + " (non-finite component)");
      v[j] = static_cast<float>(x);
      sq += x * x;
    }
    // Providers differ on whether they normalise; every Embedder returns unit vectors.
    const double inv = 1.0 / std::sqrt(std::max(sq, 1e-24));
    for (float& x : v) x = static_cast<float>(x * inv);
  }
  return out;
}

}  // namespace mcpdb::embed
