// SecretBytes: an owning byte buffer for key material that is zeroized when it
// is destroyed, resized or assigned over. It is move-only so a key is never
// copied by accident; copy with clone() when a second holder is intended.
// It has no formatting or streaming operators: keys are never printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace layersec {

// Zeroizes memory in a way the compiler cannot elide.
void secure_zero(void* p, std::size_t n);

class SecretBytes {
 public:
  SecretBytes() = default;
  explicit SecretBytes(std::size_t n);
  explicit SecretBytes(std::span<const std::uint8_t> data);
  ~SecretBytes();
  SecretBytes(SecretBytes&& o) noexcept;
  SecretBytes& operator=(SecretBytes&& o) noexcept;
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;

  [[nodiscard]] SecretBytes clone() const { return SecretBytes(span()); }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::uint8_t* data() { return data_.get(); }
  [[nodiscard]] const std::uint8_t* data() const { return data_.get(); }
  [[nodiscard]] std::span<const std::uint8_t> span() const { return {data_.get(), size_}; }
  [[nodiscard]] std::span<std::uint8_t> mutable_span() { return {data_.get(), size_}; }
  std::uint8_t& operator[](std::size_t i) { return data_[i]; }
  const std::uint8_t& operator[](std::size_t i) const { return data_[i]; }
  // Zeroizes and frees the contents.
  void clear();

 private:
  std::unique_ptr<std::uint8_t[]> data_;
  std::size_t size_ = 0;
};

}  // namespace layersec
