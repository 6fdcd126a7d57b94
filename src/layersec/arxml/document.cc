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

// AUTOSAR's Identifier (the type of SHORT-NAME): [a-zA-Z][a-zA-Z0-9_]*, at
// most 128 characters. Refusing anything else keeps '/' out of names (a path
// means one element) and bounds what a path costs.
bool is_identifier(std::string_view s) {
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (s.empty() || s.size() > kMaxShortName || !alpha(s[0])) return false;
  for (const char c : s)
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '_') return false;
  return true;
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
  // Depth-first without recursion: (element, nearest identifiable ancestor,
  // depth).
  struct Item {
    pugi::xml_node node;
    const void* ident;
    std::size_t depth;
  };
  std::vector<Item> stack;
  stack.push_back({top, nullptr, 1});
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    if (it.depth > kMaxDepth)
      throw ArxmlError(it.ident ? ident_path(it.ident) : "(xml)", "elements nested deeper than " + std::to_string(kMaxDepth));
    const void* ident = it.ident;
    if (auto name = short_name(it.node); !name.empty()) {
      const std::string parent_path = it.ident ? ident_path(it.ident) : "";
      if (!is_identifier(name))
        throw ArxmlError(parent_path + "/" + it.node.name() + "/SHORT-NAME",
                         "'" + (name.size() > 64 ? name.substr(0, 64) + "..." : name) +
                             "' is not an AUTOSAR identifier (a letter, then letters, digits or '_'; at most " +
                             std::to_string(kMaxShortName) + " characters)");
      const std::size_t path_bytes = parent_path.size() + 1 + name.size();
      if (path_bytes > kMaxPathBytes)
        throw ArxmlError(parent_path + "/" + name,
                         "SHORT-NAME path longer than " + std::to_string(kMaxPathBytes) + " characters");
      const auto [pos, fresh] = children_.emplace(std::make_pair(it.ident, name), it.node);
      if (!fresh && !(std::string_view(pos->second.name()) == "AR-PACKAGE" &&
                      std::string_view(it.node.name()) == "AR-PACKAGE"))
        throw ArxmlError(parent_path + "/" + name,
                         "two elements have this SHORT-NAME path (<" + std::string(pos->second.name()) + "> and <" +
                             it.node.name() + ">)");
      // A second part of a split AR-PACKAGE is indexed as the first.
      ident = pos->second.internal_object();
      if (fresh) idents_.emplace(ident, Ident{it.ident, std::move(name)});
      else alias_.emplace(it.node.internal_object(), ident);
    }
    by_tag_[it.node.name()].push_back(it.node);
    // Children pushed in reverse so they are visited in document order.
    const std::size_t mark = stack.size();
    for (auto c = it.node.first_child(); c; c = c.next_sibling())
      if (c.type() == pugi::node_element) stack.push_back({c, ident, it.depth + 1});
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());
  }
}

std::string Document::ident_path(const void* ident) const {
  std::vector<const std::string*> names;
  for (const void* i = ident; i; ) {
    const auto it = idents_.find(i);
    if (it == idents_.end()) break;
    names.push_back(&it->second.name);
    i = it->second.parent;
  }
  std::string out;
  for (auto n = names.rbegin(); n != names.rend(); ++n) out += "/" + **n;
  return out;
}

pugi::xml_node Document::find(std::string_view path) const {
  if (path.empty() || path[0] != '/') return {};
  const void* parent = nullptr;
  pugi::xml_node n;
  while (!path.empty()) {
    path.remove_prefix(1);  // the '/'
    const auto slash = path.find('/');
    const auto name = path.substr(0, slash);
    const auto it = children_.find(std::make_pair(parent, std::string(name)));
    if (it == children_.end()) return {};
    n = it->second;
    parent = n.internal_object();
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  }
  return n;
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
      // A split AR-PACKAGE's second part is known by its first part.
      const void* id = c.internal_object();
      if (const auto a = alias_.find(id); a != alias_.end()) id = a->second;
      return ident_path(id) + tail;
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
