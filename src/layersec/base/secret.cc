#include "layersec/base/secret.h"

#include <cstring>
#include <string.h>  // explicit_bzero (glibc)

namespace layersec {

void secure_zero(void* p, std::size_t n) {
  if (p != nullptr && n != 0) explicit_bzero(p, n);
}

SecretBytes::SecretBytes(std::size_t n) : data_(n ? new std::uint8_t[n]() : nullptr), size_(n) {}

SecretBytes::SecretBytes(std::span<const std::uint8_t> d) : SecretBytes(d.size()) {
  if (!d.empty()) std::memcpy(data_.get(), d.data(), d.size());
}

SecretBytes::~SecretBytes() { clear(); }

SecretBytes::SecretBytes(SecretBytes&& o) noexcept : data_(std::move(o.data_)), size_(o.size_) {
  o.size_ = 0;
}

SecretBytes& SecretBytes::operator=(SecretBytes&& o) noexcept {
  if (this != &o) {
    clear();
    data_ = std::move(o.data_);
    size_ = o.size_;
    o.size_ = 0;
  }
  return *this;
}

void SecretBytes::clear() {
  secure_zero(data_.get(), size_);
  data_.reset();
  size_ = 0;
}

}  // namespace layersec
