#include "layersec/arxml/ecuc.h"

#include <string_view>

namespace layersec::arxml {

std::string definition_name(pugi::xml_node n) {
  const std::string def = text_of(n.child("DEFINITION-REF"));
  const auto slash = def.find_last_of('/');
  return slash == std::string::npos ? def : def.substr(slash + 1);
}

std::vector<pugi::xml_node> ecuc_modules(const Document& d, const std::string& module) {
  std::vector<pugi::xml_node> out;
  for (const auto& m : d.all("ECUC-MODULE-CONFIGURATION-VALUES"))
    if (definition_name(m) == module) out.push_back(m);
  return out;
}

std::vector<pugi::xml_node> ecuc_children(pugi::xml_node n) {
  std::vector<pugi::xml_node> out;
  const char* list = std::string_view(n.name()) == "ECUC-MODULE-CONFIGURATION-VALUES" ? "CONTAINERS" : "SUB-CONTAINERS";
  for (const auto& c : n.child(list).children("ECUC-CONTAINER-VALUE")) out.push_back(c);
  return out;
}

EcucValues::EcucValues(const Document& d, pugi::xml_node container, const std::set<std::string>& flatten,
                       const std::set<std::string>& ignored_containers)
    : d_(d), path_(d.path_of(container)) {
  collect(container, flatten, ignored_containers);
}

void EcucValues::collect(pugi::xml_node container, const std::set<std::string>& flatten,
                         const std::set<std::string>& ignored_containers) {
  const std::string cpath = d_.path_of(container);
  // Parameters live in PARAMETER-VALUES, references in REFERENCE-VALUES (some
  // tools put references among the parameters: both are read).
  for (const char* list : {"PARAMETER-VALUES", "REFERENCE-VALUES"}) {
    for (const auto& v : container.child(list).children()) {
      if (v.type() != pugi::node_element) continue;
      const std::string name = definition_name(v);
      const std::string vpath = cpath + "/" + (name.empty() ? std::string(v.name()) : name);
      if (name.empty()) throw ArxmlError(vpath, "value without a DEFINITION-REF");
      if (values_.count(name)) throw ArxmlError(vpath, "given more than once in " + path_);
      values_.emplace(name, Value{v, vpath, false});
    }
  }
  for (const auto& sub : ecuc_children(container)) {
    const std::string def = definition_name(sub);
    if (flatten.count(def)) {
      collect(sub, flatten, ignored_containers);
    } else if (ignored_containers.count(def)) {
      ignored_.push_back(d_.path_of(sub));
    } else {
      throw ArxmlError(d_.path_of(sub), "container " + def + " is not supported by layersec");
    }
  }
}

EcucValues::Value* EcucValues::get(const std::string& name) {
  const auto it = values_.find(name);
  if (it == values_.end()) return nullptr;
  it->second.used = true;
  return &it->second;
}

bool EcucValues::has(const std::string& name) const { return values_.count(name) != 0; }

std::string EcucValues::path_of(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? path_ + "/" + name : it->second.path;
}

std::optional<std::string> EcucValues::take_text(const std::string& name) {
  const Value* v = get(name);
  if (!v) return std::nullopt;
  const auto value = v->node.child("VALUE");
  if (!value) throw ArxmlError(v->path, "no VALUE");
  return text_of(value);
}

std::optional<std::uint64_t> EcucValues::take_uint(const std::string& name, std::uint64_t min,
                                                   std::uint64_t max) {
  const auto t = take_text(name);
  if (!t) return std::nullopt;
  return parse_uint(*t, path_of(name), min, max);
}

std::optional<bool> EcucValues::take_bool(const std::string& name) {
  const auto t = take_text(name);
  if (!t) return std::nullopt;
  return parse_bool(*t, path_of(name));
}

std::optional<pugi::xml_node> EcucValues::take_ref(const std::string& name) {
  const Value* v = get(name);
  if (!v) return std::nullopt;
  const auto ref = v->node.child("VALUE-REF");
  if (!ref) throw ArxmlError(v->path, "no VALUE-REF");
  if (ref.attribute("BASE")) throw ArxmlError(v->path, "relative references (BASE=) are not supported");
  const std::string target = text_of(ref);
  const auto n = d_.find(target);
  if (!n) throw ArxmlError(v->path, "reference '" + target + "' names no element of this file");
  return n;
}

void EcucValues::ignore(std::initializer_list<std::string> names) {
  for (const auto& n : names)
    if (Value* v = get(n)) ignored_.push_back(v->path);
}

void EcucValues::finish() const {
  for (const auto& [name, v] : values_)
    if (!v.used) throw ArxmlError(v.path, "parameter " + name + " is not supported by layersec");
}

}  // namespace layersec::arxml
