// An AUTOSAR XML document (ARXML) read with pugixml, indexed by SHORT-NAME
// path, with the typed accessors the importer (importer.h) uses. Every error
// is an ArxmlError naming the ARXML path of the element at fault: the
// SHORT-NAME path of the nearest identifiable element ("/ActiveEcuC/SecOC/
// TxSpeed"), then the parameter or element below it ("/SecOCDataId").
//
// Untrusted input: the text is parsed by pugixml (no DTD, no entity
// expansion, no network); the index is built without recursion and refuses
// nesting deeper than kMaxDepth, SHORT-NAMEs that are not AUTOSAR identifiers
// and SHORT-NAME paths longer than kMaxPathBytes. It stores each
// identifiable's SHORT-NAME once, with its parent (paths are built when asked
// for), so a hostile file costs memory proportional to its size and never a
// stack overflow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pugixml.hpp>

namespace layersec::arxml {

class ArxmlError : public std::runtime_error {
 public:
  ArxmlError(const std::string& path, const std::string& problem)
      : std::runtime_error(path + ": " + problem), path_(path), problem_(problem) {}
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }

 private:
  std::string path_;
  std::string problem_;
};

// One line of the import report: where in the ARXML, and what became of it.
struct ImportNote {
  std::string path;
  std::string text;
};

inline constexpr std::size_t kMaxDepth = 256;
// AUTOSAR's Identifier limit for one SHORT-NAME, and ours for a whole
// SHORT-NAME path (real extracts stay far below it): every path an error or
// note carries is at most this long.
inline constexpr std::size_t kMaxShortName = 128;
inline constexpr std::size_t kMaxPathBytes = 1024;
inline constexpr std::size_t kMaxDocumentBytes = 16u << 20;

class Document {
 public:
  // Parses and indexes `text`. Throws ArxmlError("(xml)", ...) for malformed
  // XML (with the line), a root other than AUTOSAR, nesting deeper than
  // kMaxDepth, a SHORT-NAME that is not an AUTOSAR identifier, a SHORT-NAME
  // path longer than kMaxPathBytes, or two identifiables with one SHORT-NAME
  // path (the parts of a split AR-PACKAGE are one package).
  explicit Document(std::string_view text);
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  [[nodiscard]] pugi::xml_node root() const { return doc_.document_element(); }
  // The element whose SHORT-NAME path is `path`, or an empty node.
  [[nodiscard]] pugi::xml_node find(std::string_view path) const;
  // Every element with tag `tag`, in document order.
  [[nodiscard]] const std::vector<pugi::xml_node>& all(std::string_view tag) const;
  // ARXML path of `n`: the SHORT-NAME path of n (or of its nearest
  // identifiable ancestor, followed by the tags below it).
  [[nodiscard]] std::string path_of(pugi::xml_node n) const;
  // The target of a reference element (…-REF: an absolute SHORT-NAME path
  // as its text). Throws naming the reference when it does not resolve.
  [[nodiscard]] pugi::xml_node deref(pugi::xml_node ref) const;
  // The SHORT-NAME text of n ("" when it has none).
  [[nodiscard]] static std::string short_name(pugi::xml_node n);

 private:
  struct Ident {
    const void* parent = nullptr;  // nearest identifiable ancestor (nullptr: none)
    std::string name;              // SHORT-NAME
  };
  [[nodiscard]] std::string ident_path(const void* ident) const;

  pugi::xml_document doc_;
  std::unordered_map<const void*, Ident> idents_;
  std::unordered_map<const void*, const void*> alias_;  // split AR-PACKAGE part -> first part
  // (parent identifiable, SHORT-NAME) -> element
  std::map<std::pair<const void*, std::string>, pugi::xml_node> children_;
  std::unordered_map<std::string, std::vector<pugi::xml_node>> by_tag_;
};

// Trimmed text of a leaf element.
[[nodiscard]] std::string text_of(pugi::xml_node n);
// The only child element `tag` of n, or an empty node; throws ArxmlError when
// there are several.
[[nodiscard]] pugi::xml_node only_child(const Document& d, pugi::xml_node n, const char* tag);
// An AUTOSAR integer (decimal, 0x hex or 0b binary) in min..max; throws
// naming `path` otherwise.
[[nodiscard]] std::uint64_t parse_uint(const std::string& text, const std::string& path,
                                       std::uint64_t min, std::uint64_t max);
// "true"/"false" (or 1/0); throws naming `path` otherwise.
[[nodiscard]] bool parse_bool(const std::string& text, const std::string& path);
// A dotted IPv4 address; throws naming `path` otherwise.
[[nodiscard]] std::string parse_ipv4(const std::string& text, const std::string& path);
// The child `tag` of n as an integer in min..max (required: throws when
// absent; optional: nullopt).
[[nodiscard]] std::uint64_t child_uint(const Document& d, pugi::xml_node n, const char* tag,
                                       std::uint64_t min, std::uint64_t max);
[[nodiscard]] std::optional<std::uint64_t> child_uint_opt(const Document& d, pugi::xml_node n,
                                                          const char* tag, std::uint64_t min,
                                                          std::uint64_t max);

}  // namespace layersec::arxml
