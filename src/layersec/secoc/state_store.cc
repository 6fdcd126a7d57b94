#include "layersec/secoc/state_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <sstream>

namespace layersec::secoc {

std::string serialize_state(const PersistedState& s) {
  std::ostringstream o;
  o << "layersec-secoc-state 1\n" << "tx_trip " << s.tx_trip << "\n";
  for (const auto& r : s.rx) o << "rx " << r.channel << " " << r.trip << " " << r.reset << "\n";
  o << "end\n";
  return o.str();
}

Result<PersistedState, StoreError> parse_state(const std::string& text) {
  std::istringstream in(text);
  std::string magic;
  int version = 0;
  if (!(in >> magic >> version) || magic != "layersec-secoc-state" || version != 1)
    return Err(StoreError::kCorrupt);
  PersistedState s;
  bool have_trip = false;
  std::string word;
  while (in >> word) {
    if (word == "tx_trip") {
      if (have_trip || !(in >> s.tx_trip)) return Err(StoreError::kCorrupt);
      have_trip = true;
    } else if (word == "rx") {
      PersistedState::RxSync r;
      if (!(in >> r.channel >> r.trip >> r.reset)) return Err(StoreError::kCorrupt);
      s.rx.push_back(r);
    } else if (word == "end") {
      std::string extra;
      if (in >> extra || !have_trip) return Err(StoreError::kCorrupt);
      return s;
    } else {
      return Err(StoreError::kCorrupt);
    }
  }
  return Err(StoreError::kCorrupt);  // no "end": truncated
}

Result<PersistedState, StoreError> FileStateStore::load() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return PersistedState{};
    return Err(StoreError::kIo);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return Err(StoreError::kIo);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (1U << 20)) {
      ::close(fd);
      return Err(StoreError::kCorrupt);
    }
  }
  ::close(fd);
  return parse_state(text);
}

Status<StoreError> FileStateStore::save(const PersistedState& state) {
  const std::string text = serialize_state(state);
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Err(StoreError::kIo);
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Err(StoreError::kIo);
    }
    off += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return Err(StoreError::kIo);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Err(StoreError::kIo);
  }
  // Make the rename itself durable.
  std::string dir = ".";
  if (const auto slash = path_.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path_.substr(0, slash);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Err(StoreError::kIo);
  const int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return Err(StoreError::kIo);
  return {};
}

}  // namespace layersec::secoc
