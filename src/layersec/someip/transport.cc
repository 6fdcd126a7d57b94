#include "layersec/someip/transport.h"

namespace layersec::someip {

std::string_view to_string(TransportError e) {
  switch (e) {
    case TransportError::kPortInUse:
      return "port-in-use";
    case TransportError::kNotBound:
      return "not-bound";
    case TransportError::kTooLarge:
      return "too-large";
    case TransportError::kUnreachable:
      return "unreachable";
    case TransportError::kSystem:
      return "system";
  }
  return "?";
}

}  // namespace layersec::someip
