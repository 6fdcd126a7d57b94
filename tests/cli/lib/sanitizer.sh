# Sourced by tests in tests/cli/ (not a test itself): whether the layersec
# binary under test is a sanitizer build (make test-asan: ASan + UBSan,
# Debug), for the few checks whose outcome depends on the build's speed or
# on AddressSanitizer's allocator rather than on the code under test.
# Usage: source .../lib/sanitizer.sh; if sanitizer_build "$bin"; then ...
sanitizer_build() {
  grep -qa -m 1 '__asan_init' "$1"
}
