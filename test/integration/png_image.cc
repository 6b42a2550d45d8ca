#include "test/integration/png_image.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace sluice::test {
namespace {

uint32_t be32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3]));
}

uint8_t paeth(int a, int b, int c) {
  int p = a + b - c;
  int pa = std::abs(p - a);
  int pb = std::abs(p - b);
  int pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

bool decodePng(const std::string& bytes, PngImage* out, std::string* error) {
  static const char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 8 || bytes.compare(0, 8, kSignature, 8) != 0) {
    *error = "not a PNG (signature)";
    return false;
  }
  std::string idat;
  int channels = 0;
  for (size_t at = 8; at + 8 <= bytes.size();) {
    const uint32_t length = be32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) {
      *error = "truncated chunk " + type;
      return false;
    }
    const std::string data = bytes.substr(at + 8, length);
    if (type == "IHDR") {
      out->width = static_cast<int>(be32(data, 0));
      out->height = static_cast<int>(be32(data, 4));
      const int depth = static_cast<uint8_t>(data[8]);
      const int colour = static_cast<uint8_t>(data[9]);
      const int interlace = static_cast<uint8_t>(data[12]);
      channels = colour == 2 ? 3 : colour == 6 ? 4 : 0;
      if (depth != 8 || channels == 0 || interlace != 0) {
        *error = "unsupported PNG (depth " + std::to_string(depth) + ", colour type " +
                 std::to_string(colour) + ", interlace " + std::to_string(interlace) + ")";
        return false;
      }
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      break;
    }
    at += 12 + length;
  }
  if (channels == 0 || out->width <= 0 || out->height <= 0) {
    *error = "no IHDR";
    return false;
  }
  const size_t stride = static_cast<size_t>(out->width) * channels;
  std::string raw((stride + 1) * static_cast<size_t>(out->height), '\0');
  uLongf raw_size = raw.size();
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                 reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    *error = "bad image data";
    return false;
  }
  std::vector<uint8_t> prev(stride, 0);
  std::vector<uint8_t> row(stride);
  out->pixels.clear();
  out->pixels.reserve(static_cast<size_t>(out->width) * out->height);
  for (int y = 0; y < out->height; ++y) {
    const uint8_t* line = reinterpret_cast<const uint8_t*>(raw.data()) + y * (stride + 1);
    const int filter = line[0];
    for (size_t i = 0; i < stride; ++i) {
      const int x = line[1 + i];
      const int a = i >= static_cast<size_t>(channels) ? row[i - channels] : 0;
      const int b = prev[i];
      const int c = i >= static_cast<size_t>(channels) ? prev[i - channels] : 0;
      int v = x;
      switch (filter) {
        case 0:
          break;
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + b;
          break;
        case 3:
          v = x + (a + b) / 2;
          break;
        case 4:
          v = x + paeth(a, b, c);
          break;
        default:
          *error = "bad filter " + std::to_string(filter);
          return false;
      }
      row[i] = static_cast<uint8_t>(v);
    }
    for (int px = 0; px < out->width; ++px) {
      const uint8_t* p = &row[static_cast<size_t>(px) * channels];
      out->pixels.push_back((static_cast<uint32_t>(p[0]) << 16) | (p[1] << 8) | p[2]);
    }
    prev.swap(row);
  }
  return true;
}

size_t PngContent::count(uint32_t rgb) const {
  for (const auto& [colour, n] : histogram) {
    if (colour == rgb) return n;
  }
  return 0;
}

PngContent measure(const PngImage& image) {
  std::unordered_map<uint32_t, size_t> counts;
  for (uint32_t p : image.pixels) ++counts[p];
  PngContent c;
  c.histogram.assign(counts.begin(), counts.end());
  std::sort(c.histogram.begin(), c.histogram.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  c.colours = c.histogram.size();
  if (!image.pixels.empty() && !c.histogram.empty()) {
    c.foreground = 1.0 - static_cast<double>(c.histogram.front().second) /
                             static_cast<double>(image.pixels.size());
  }
  return c;
}

}  // namespace sluice::test
