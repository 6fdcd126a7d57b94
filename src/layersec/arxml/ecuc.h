// ECU configuration values (ECUC-MODULE-CONFIGURATION-VALUES) in an ARXML
// document: modules, containers, parameters and references, each named by
// the last segment of its DEFINITION-REF ("/AUTOSAR/EcucDefs/SecOC/
// SecOCTxPduProcessing/SecOCDataId" -> "SecOCDataId"), so vendor definition
// paths (e.g. "/MyVendor/SecOC/...") work as well as the AUTOSAR ones.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "layersec/arxml/document.h"

namespace layersec::arxml {

// Last segment of the DEFINITION-REF child of n ("" without one).
[[nodiscard]] std::string definition_name(pugi::xml_node n);

// The ECUC module configurations whose definition name is `module`.
[[nodiscard]] std::vector<pugi::xml_node> ecuc_modules(const Document& d, const std::string& module);
// Direct containers of a module (CONTAINERS) or sub-containers of a container
// (SUB-CONTAINERS).
[[nodiscard]] std::vector<pugi::xml_node> ecuc_children(pugi::xml_node module_or_container);

// The parameters and references of one container, flattened over the
// sub-containers the caller allows, each used at most once. What the importer
// maps it takes with take_*; what has no effect on the wire it marks
// ignore(); finish() then refuses anything left, naming its ARXML path.
class EcucValues {
 public:
  // `flatten`: definition names of sub-containers whose values count as the
  // container's own. Any other sub-container is refused unless listed in
  // `ignored_containers`. Throws ArxmlError for a value given twice.
  EcucValues(const Document& d, pugi::xml_node container, const std::set<std::string>& flatten,
             const std::set<std::string>& ignored_containers = {});

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] bool has(const std::string& name) const;
  [[nodiscard]] std::string path_of(const std::string& name) const;
  [[nodiscard]] std::optional<std::uint64_t> take_uint(const std::string& name, std::uint64_t min,
                                                       std::uint64_t max);
  [[nodiscard]] std::optional<bool> take_bool(const std::string& name);
  [[nodiscard]] std::optional<std::string> take_text(const std::string& name);
  // A reference's target (resolved in the document).
  [[nodiscard]] std::optional<pugi::xml_node> take_ref(const std::string& name);
  // Values with no effect here (listed by the caller in the import notes).
  void ignore(std::initializer_list<std::string> names);
  // Throws ArxmlError for the first value neither taken nor ignored.
  void finish() const;
  [[nodiscard]] const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  struct Value {
    pugi::xml_node node;  // the *-PARAM-VALUE / *-REFERENCE-VALUE element
    std::string path;     // container path + "/" + definition name
    bool used = false;
  };
  Value* get(const std::string& name);
  void collect(pugi::xml_node container, const std::set<std::string>& flatten,
               const std::set<std::string>& ignored_containers);

  const Document& d_;
  std::string path_;
  std::map<std::string, Value> values_;
  std::vector<std::string> ignored_;
};

}  // namespace layersec::arxml
