#include "aws/xml_fields.hpp"

#include <cstdlib>

namespace mcpdb::aws {
namespace {

void appendUtf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x110000) {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string decodeEntities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    auto semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out.push_back('&');
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp")
      out.push_back('&');
    else if (ent == "lt")
      out.push_back('<');
    else if (ent == "gt")
      out.push_back('>');
    else if (ent == "quot")
      out.push_back('"');
    else if (ent == "apos")
      out.push_back('\'');
    else if (ent.size() > 1 && ent[0] == '#') {
      std::string digits(ent.substr(ent[1] == 'x' ? 2 : 1));
      appendUtf8(out, std::strtoul(digits.c_str(), nullptr, ent[1] == 'x' ? 16 : 10));
    } else {
      out.append(s.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

}  // namespace

std::optional<std::string> xmlElementText(std::string_view xml, std::string_view tag) {
  // Built with append: `"<" + std::string(tag) + ">"` trips a g++ 12 -O3 -Wrestrict false positive.
  std::string open;
  open.reserve(tag.size() + 2);
  open.append("<").append(tag).append(">");
  std::string close;
  close.reserve(tag.size() + 3);
  close.append("</").append(tag).append(">");
  auto start = xml.find(open);
  if (start == std::string_view::npos) return std::nullopt;
  start += open.size();
  auto end = xml.find(close, start);
  if (end == std::string_view::npos) return std::nullopt;
  return decodeEntities(xml.substr(start, end - start));
}

}  // namespace mcpdb::aws
