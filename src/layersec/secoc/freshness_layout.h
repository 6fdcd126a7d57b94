// Freshness Value layouts (SecOC FVM, SWS_SecOC section 7.1.4 / Annex on
// multiple freshness counters).
//
// One structure covers both layouts the project needs, MSB to LSB:
//
//   TripCnt | ResetCnt | MsgCnt (= MsgCntUpper | MsgCntLower) | ResetFlag
//
//   * the seed paper's FV64 = Trip16 || Reset16 || Msg32 (ResetFlag = 0 bits),
//     with the 16 least significant bits (MsgCntLower) transmitted;
//   * the JASPAR / Profile 3 layout (TripCnt | ResetCnt | MsgCntUpper |
//     MsgCntLower | ResetFlag), where MsgCntLower | ResetFlag are sent and
//     ResetFlag repeats the low bits of ResetCnt.
//
// The transmitted (truncated) FV is always the freshnessValueTxLength least
// significant bits of the complete FV ([PRS_SecOc_00610] wording), so the
// layout fixes MsgCntLower = TxLength - ResetFlag.
//
// Timestamp freshness (`timestamp` set; AUTOSAR's time-based FV, SWS_SecOC
// "FreshnessValue from a synchronised time base"): the complete FV is the
// sender's synchronised-clock time in microseconds (strictly increasing per
// PDU: two PDUs in one microsecond take consecutive values), held in `msg`
// (trip, reset and flag widths are 0). The receiver reconstructs it from its
// own clock and accepts it only within its maximum age (engine.h).
#pragma once

#include <cstdint>

namespace layersec::secoc {

// The three counters of a complete Freshness Value. The ResetFlag is derived
// from `reset` and is not stored separately.
struct FreshnessCounters {
  std::uint64_t trip = 0;
  std::uint64_t reset = 0;
  std::uint64_t msg = 0;
  friend bool operator==(const FreshnessCounters&, const FreshnessCounters&) = default;
};

// Widths in bits. Invariants (checked by valid()): total() <= 64,
// reset_flag <= reset, reset_flag < tx <= reset_flag + msg, or total() == 0
// and tx == 0 (no freshness, Profile 2).
struct FreshnessLayout {
  std::uint8_t trip_bits = 0;
  std::uint8_t reset_bits = 0;
  std::uint8_t msg_bits = 0;
  std::uint8_t reset_flag_bits = 0;
  std::uint8_t tx_bits = 0;  // freshnessValueTxLength
  bool timestamp = false;    // the FV is a microsecond timestamp, not counters

  [[nodiscard]] constexpr unsigned total() const {
    return unsigned{trip_bits} + reset_bits + msg_bits + reset_flag_bits;
  }
  [[nodiscard]] constexpr bool has_freshness() const { return total() != 0; }
  // Bits of MsgCnt on the wire (MsgCntLower).
  [[nodiscard]] constexpr unsigned msg_lower_bits() const {
    return has_freshness() ? unsigned{tx_bits} - reset_flag_bits : 0;
  }
  [[nodiscard]] constexpr bool valid() const {
    if (total() == 0) return tx_bits == 0 && !timestamp;
    if (timestamp)
      return trip_bits == 0 && reset_bits == 0 && reset_flag_bits == 0 && msg_bits >= 48 &&
             msg_bits <= 64 && tx_bits >= 1 && tx_bits <= msg_bits;
    return total() <= 64 && reset_flag_bits <= reset_bits && tx_bits > reset_flag_bits &&
           tx_bits <= unsigned{reset_flag_bits} + msg_bits;
  }
  [[nodiscard]] static constexpr std::uint64_t mask(unsigned bits) {
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  }
  [[nodiscard]] constexpr std::uint64_t max_trip() const { return mask(trip_bits); }
  [[nodiscard]] constexpr std::uint64_t max_reset() const { return mask(reset_bits); }
  [[nodiscard]] constexpr std::uint64_t max_msg() const { return mask(msg_bits); }

  // The complete FV as an integer of total() bits.
  [[nodiscard]] constexpr std::uint64_t compose(const FreshnessCounters& c) const {
    std::uint64_t v = 0;
    v = shl(v, trip_bits) | (c.trip & mask(trip_bits));
    v = shl(v, reset_bits) | (c.reset & mask(reset_bits));
    v = shl(v, msg_bits) | (c.msg & mask(msg_bits));
    v = shl(v, reset_flag_bits) | (c.reset & mask(reset_flag_bits));
    return v;
  }
  // Truncated FV: the tx_bits least significant bits of the complete FV.
  [[nodiscard]] constexpr std::uint64_t truncate(const FreshnessCounters& c) const {
    return compose(c) & mask(tx_bits);
  }
  // Splits a received truncated FV into MsgCntLower and ResetFlag.
  [[nodiscard]] constexpr std::uint64_t rx_msg_lower(std::uint64_t truncated) const {
    return reset_flag_bits >= 64 ? 0 : truncated >> reset_flag_bits;
  }
  [[nodiscard]] constexpr std::uint64_t rx_reset_flag(std::uint64_t truncated) const {
    return truncated & mask(reset_flag_bits);
  }

  // The seed paper's Equation (1) with `tx` transmitted bits (16 in Table 10).
  static constexpr FreshnessLayout fv64(std::uint8_t tx) { return {16, 16, 32, 0, tx, false}; }
  // Timestamp FV of `total` bits (48..64) with `tx` least significant bits sent.
  static constexpr FreshnessLayout timestamp_us(std::uint8_t total, std::uint8_t tx) {
    return {0, 0, total, 0, tx, true};
  }
  // JASPAR: 64-bit FV, MsgCntLower | ResetFlag transmitted.
  static constexpr FreshnessLayout jaspar(std::uint8_t trip, std::uint8_t reset, std::uint8_t msg,
                                          std::uint8_t flag, std::uint8_t tx) {
    return {trip, reset, msg, flag, tx, false};
  }

 private:
  static constexpr std::uint64_t shl(std::uint64_t v, unsigned bits) {
    return bits >= 64 ? 0 : v << bits;
  }
};

}  // namespace layersec::secoc
