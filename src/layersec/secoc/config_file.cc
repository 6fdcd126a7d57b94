// load_config_file (declared in config.h): the file reader of the SecOC
// configuration, in the secoc_io library; parsing is config.cc's.
#include <string>

#include <nlohmann/json.hpp>

#include "layersec/base/file.h"
#include "layersec/secoc/config.h"

namespace layersec::secoc {

EngineConfig load_config_file(const std::string& path) {
  // base/file.h: regular files only (a FIFO cannot block, a directory is
  // named as one), bounded, read errors are errors.
  const std::string text = read_config_file<ConfigError>(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number beyond a double (out_of_range 406)
    throw ConfigError(path, std::string("JSON syntax: ") + e.what());
  }
  return config_from_json(j);
}

}  // namespace layersec::secoc
