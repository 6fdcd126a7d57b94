#include "layersec/arxml/document.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace layersec::arxml {
namespace {

std::size_t line_of(std::string_view text, std::ptrdiff_t offset) {
  if (offset < 0) return 0;
  const auto end = std::min(static_cast<std::size_t>(offset), text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

}  // namespace

std::string Document::short_name(pugi::xml_node n) {
  const auto sn = n.child("SHORT-NAME");
  return sn ? text_of(sn) : std::string();
}

Document::Document(std::string_view text) {
  if (text.size() > kMaxDocumentBytes)
    throw ArxmlError("(xml)", "document larger than " + std::to_string(kMaxDocumentBytes >> 20) + " MiB");
  const auto r = doc_.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!r)
    throw ArxmlError("(xml)", std::string("not well-formed XML: ") + r.description() + " at line " +
                                  std::to_string(line_of(text, r.offset)));
  const auto top = doc_.document_element();
  if (std::string_view(top.name()) != "AUTOSAR")
    throw ArxmlError("(xml)", "the root element is <" + std::string(top.name()) + ">, not <AUTOSAR>");
  // Depth-first without recursion: (element, path of its nearest identifiable
  // ancestor or itself, depth).
  struct Item {
    pugi::xml_node node;
    std::string path;
    std::size_t depth;
  };
  std::vector<Item> stack;
  stack.push_back({top, "", 1});
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    if (it.depth > kMaxDepth)
      throw ArxmlError(it.path.empty() ? "(xml)" : it.path,
                       "elements nested deeper than " + std::to_string(kMaxDepth));
    std::string path = it.path;
    if (const auto name = short_name(it.node); !name.empty()) {
      path += "/" + name;
      const auto [pos, fresh] = by_path_.emplace(path, it.node);
      if (!fresh && !(std::string_view(pos->second.name()) == "AR-PACKAGE" &&
                      std::string_view(it.node.name()) == "AR-PACKAGE"))
        throw ArxmlError(path, "two elements have this SHORT-NAME path (<" + std::string(pos->second.name()) +
                                   "> and <" + it.node.name() + ">)");
    }
    path_by_node_[it.node.internal_object()] = path;
    by_tag_[it.node.name()].push_back(it.node);
    // Children pushed in reverse so they are visited in document order.
    std::vector<pugi::xml_node> kids;
    for (auto c = it.node.first_child(); c; c = c.next_sibling())
      if (c.type() == pugi::node_element) kids.push_back(c);
    for (auto k = kids.rbegin(); k != kids.rend(); ++k) stack.push_back({*k, path, it.depth + 1});
  }
}

pugi::xml_node Document::find(std::string_view path) const {
  const auto it = by_path_.find(std::string(path));
  return it == by_path_.end() ? pugi::xml_node() : it->second;
}

const std::vector<pugi::xml_node>& Document::all(std::string_view tag) const {
  static const std::vector<pugi::xml_node> none;
  const auto it = by_tag_.find(std::string(tag));
  return it == by_tag_.end() ? none : it->second;
}

std::string Document::path_of(pugi::xml_node n) const {
  std::string tail;
  for (auto c = n; c; c = c.parent()) {
    if (!short_name(c).empty()) {
      const auto it = path_by_node_.find(c.internal_object());
      return (it == path_by_node_.end() ? std::string("(unindexed)") : it->second) + tail;
    }
    if (c.type() != pugi::node_element) break;
    tail = "/" + std::string(c.name()) + tail;
  }
  return tail.empty() ? "(document)" : tail;
}

pugi::xml_node Document::deref(pugi::xml_node ref) const {
  const std::string target = text_of(ref);
  if (ref.attribute("BASE")) throw ArxmlError(path_of(ref), "relative references (BASE=) are not supported");
  if (target.empty() || target[0] != '/')
    throw ArxmlError(path_of(ref), "reference '" + target + "' is not an absolute SHORT-NAME path");
  const auto n = find(target);
  if (!n) throw ArxmlError(path_of(ref), "reference '" + target + "' names no element of this file");
  return n;
}

std::string text_of(pugi::xml_node n) {
  std::string s = n.child_value();
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

pugi::xml_node only_child(const Document& d, pugi::xml_node n, const char* tag) {
  const auto c = n.child(tag);
  if (c && c.next_sibling(tag)) throw ArxmlError(d.path_of(n) + "/" + tag, "given more than once");
  return c;
}

std::uint64_t parse_uint(const std::string& text, const std::string& path, std::uint64_t min,
                         std::uint64_t max) {
  int base = 10;
  std::string_view digits = text;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'b' || digits[1] == 'B')) {
    base = 2;
    digits.remove_prefix(2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    throw ArxmlError(path, "'" + text + "': octal numbers are not supported (write it in decimal or 0x hex)");
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    throw ArxmlError(path, "'" + text + "' is not an unsigned integer (decimal, 0x hex or 0b binary)");
  if (v < min || v > max)
    throw ArxmlError(path, std::to_string(v) + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
  return v;
}

bool parse_bool(const std::string& text, const std::string& path) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw ArxmlError(path, "'" + text + "' is not a boolean (true/false)");
}

std::string parse_ipv4(const std::string& text, const std::string& path) {
  std::vector<std::string> parts(1);
  for (const char c : text) {
    if (c == '.') parts.emplace_back();
    else parts.back() += c;
  }
  bool ok = parts.size() == 4;
  for (const auto& p : parts)
    ok = ok && !p.empty() && p.size() <= 3 && p.find_first_not_of("0123456789") == std::string::npos &&
         std::stoul(p) <= 255;
  if (!ok) throw ArxmlError(path, "'" + text + "' is not an IPv4 address");
  return text;
}

std::uint64_t child_uint(const Document& d, pugi::xml_node n, const char* tag, std::uint64_t min,
                         std::uint64_t max) {
  const auto v = child_uint_opt(d, n, tag, min, max);
  if (!v) throw ArxmlError(d.path_of(n) + "/" + tag, "required");
  return *v;
}

std::optional<std::uint64_t> child_uint_opt(const Document& d, pugi::xml_node n, const char* tag,
                                            std::uint64_t min, std::uint64_t max) {
  const auto c = only_child(d, n, tag);
  if (!c) return std::nullopt;
  return parse_uint(text_of(c), d.path_of(n) + "/" + tag, min, max);
}

}  // namespace layersec::arxml
