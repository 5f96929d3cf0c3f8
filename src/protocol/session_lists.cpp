#include <algorithm>

#include "protocol/listing.hpp"
#include "protocol/session.hpp"

namespace mcpdb::protocol {

void Session::listTools(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                        bool modern) const {
  std::string page = toolsPage(params, modern);
  if (page.empty()) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    return;
  }
  out->sendSerialized(serializedResultResponse(id, page), true);
}

std::string Session::toolsPage(const Json& params, bool modern) const {
  const auto start = listStart(params);
  if (!start) return {};
  const auto surface = core_.surface();  // one generation for the whole page
  auto make = [&] {
    std::vector<const Tool*> tools;
    for (const auto& t : surface->registry().tools()) {
      if (visible(*t)) tools.push_back(t.get());
    }
    auto page = pageOf(tools, *start, core_.options().page_size, "tools",
                       [](const Tool* t) { return ToolRegistry::describe(*t); });
    return page ? serialize(finishResult(std::move(*page), modern, /*cacheable=*/true))
                : std::string();
  };
  // A scope may change on reload (HTTP client tables), so only unscoped pages are cached.
  return scope_ ? make()
                : surface->unscopedToolsPage(*start, modern, core_.options().page_size, make);
}

void Session::listResources(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                            bool modern) const {
  const auto surface = core_.surface();
  std::vector<const Resource*> items;
  for (const auto& r : surface->registry().resources()) {
    if (visible(*r, surface->registry())) items.push_back(r.get());
  }
  const auto start = listStart(params);
  auto page = start ? pageOf(items, *start, core_.options().page_size, "resources",
                             [](const Resource* r) { return ToolRegistry::describe(*r); })
                    : std::nullopt;
  if (!page) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    return;
  }
  out->send(makeResultResponse(id, finishResult(std::move(*page), modern, true)));
}

void Session::listTemplates(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                            bool modern) const {
  const auto surface = core_.surface();
  std::vector<const ResourceTemplate*> items;
  for (const auto& t : surface->registry().templates()) {
    if (visible(t, surface->registry())) items.push_back(&t);
  }
  const auto start = listStart(params);
  auto page = start ? pageOf(items, *start, core_.options().page_size, "resourceTemplates",
                             [](const ResourceTemplate* t) { return ToolRegistry::describe(*t); })
                    : std::nullopt;
  if (!page) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    return;
  }
  out->send(makeResultResponse(id, finishResult(std::move(*page), modern, true)));
}

// This server offers no prompts; the methods answer so (an empty list, an unknown name), so that a
// client that lists everything a server declares gets a list with its caching hints.
void Session::listPrompts(const Json& id, const Json& params, const std::shared_ptr<Outbox>& out,
                          bool modern) const {
  if (listStart(params) != std::optional<std::size_t>(0)) {
    out->send(makeErrorResponse(id, rpc::kInvalidParams, "invalid cursor"));
    return;
  }
  out->send(makeResultResponse(
      id, finishResult(Json{{"prompts", Json::array()}}, modern, /*cacheable=*/true)));
}

bool Session::visible(const Resource& resource, const ToolRegistry& registry) const {
  for (const auto& name : resource.tools) {
    const Tool* t = registry.find(name);
    if (t != nullptr && visible(*t)) return true;
  }
  return false;
}

bool Session::visible(const ResourceTemplate& tmpl, const ToolRegistry& registry) const {
  for (const auto& t : registry.tools()) {
    if (t->engine == tmpl.engine && visible(*t)) return true;
  }
  return false;
}

}  // namespace mcpdb::protocol
