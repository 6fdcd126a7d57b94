// What the attack runners' tests share: a runner's rows by (configuration,
// class), and a row looked up by name (a missing row is a test failure).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "layersec/attack/report.h"

namespace layersec::attack {

using RowKey = std::pair<std::string, std::string>;  // configuration, class
using RowIndex = std::map<RowKey, AttackRow>;

inline RowIndex index_rows(std::vector<AttackRow> rows) {
  RowIndex m;
  for (auto& row : rows) {
    RowKey key{row.configuration, row.attack_class};
    m[key] = std::move(row);
  }
  return m;
}

inline const AttackRow& find_row(const RowIndex& rows, const std::string& config, const std::string& cls) {
  const auto it = rows.find({config, cls});
  if (it == rows.end()) ADD_FAILURE() << "no row " << config << " " << cls;
  static const AttackRow none;
  return it == rows.end() ? none : it->second;
}

}  // namespace layersec::attack
