//===- FileBuffer.cpp - Read-only file contents ---------------------------===//

#include "fuel/Support/FileBuffer.h"

#include "fuel/Support/Diagnostics.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace fuel;

FileBuffer::~FileBuffer() {
  if (mapped)
    munmap(const_cast<char *>(begin), length);
}

std::shared_ptr<const FileBuffer>
FileBuffer::slice(std::shared_ptr<const FileBuffer> parent, size_t offset,
                  size_t size) {
  std::shared_ptr<FileBuffer> buffer(new FileBuffer());
  buffer->begin = parent->data() + offset;
  buffer->length = size;
  buffer->parent = std::move(parent);
  return buffer;
}

std::shared_ptr<const FileBuffer> FileBuffer::fromBytes(std::string bytes) {
  std::shared_ptr<FileBuffer> buf(new FileBuffer());
  buf->owned = std::move(bytes);
  buf->begin = buf->owned.data();
  buf->length = buf->owned.size();
  return buf;
}

Expected<std::shared_ptr<const FileBuffer>> FileBuffer::open(const std::string &path,
                                                             bool regularOnly) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Error{std::strerror(errno)};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Error error{std::strerror(errno)};
    ::close(fd);
    return error;
  }
  if (S_ISDIR(st.st_mode) || (regularOnly && !S_ISREG(st.st_mode))) {
    ::close(fd);
    return Error{S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file"};
  }
  std::shared_ptr<FileBuffer> buf(new FileBuffer());
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                   MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::close(fd);
      buf->begin = static_cast<const char *>(p);
      buf->length = static_cast<size_t>(st.st_size);
      buf->mapped = true;
      return buf;
    }
  }
  // Pipes, empty files and unmappable files are read instead.
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      Error error{std::strerror(errno)};
      ::close(fd);
      return error;
    }
    if (n == 0)
      break;
    buf->owned.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  buf->begin = buf->owned.data();
  buf->length = buf->owned.size();
  return buf;
}

std::shared_ptr<const FileBuffer> fuel::openInputFile(const std::string &path,
                                                     std::string_view what,
                                                     DiagnosticEngine &diag) {
  Expected<std::shared_ptr<const FileBuffer>> buffer = FileBuffer::open(path);
  if (!buffer) {
    SourceLocation loc;
    loc.file = path;
    diag.error(std::move(loc), "cannot read " + std::string(what) + " file: " + buffer.error());
    return nullptr;
  }
  return *buffer;
}

Expected<void> fuel::writeFileAtomically(const std::string &path, std::string_view bytes) {
  std::string temporary = path + ".tmp" + std::to_string(::getpid());
  std::ofstream file(temporary, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  std::error_code ec;
  if (file)
    std::filesystem::rename(temporary, path, ec);
  if (file && !ec)
    return {};
  std::string why = ec ? ec.message() : std::strerror(errno);
  std::filesystem::remove(temporary, ec);
  return Error{"cannot write '" + path + "': " + why};
}
