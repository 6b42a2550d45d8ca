// A small PNG decoder for checking screenshots in tests (8-bit RGB or RGBA, not interlaced: what
// Chromium writes), and a measure of how much a picture shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::test {

struct PngImage {
  int width = 0;
  int height = 0;
  std::vector<uint32_t> pixels;  // 0xRRGGBB, row by row
};

// Decodes `bytes` into *out. False with *error for a file that is not such a PNG.
bool decodePng(const std::string& bytes, PngImage* out, std::string* error);

// What a picture shows: how many distinct colours, and the share of pixels that differ from
// the most common colour (the background). A blank page is 1 colour and 0.
struct PngContent {
  size_t colours = 0;
  double foreground = 0;
  // Pixels of exactly `rgb`.
  size_t count(uint32_t rgb) const;
  std::vector<std::pair<uint32_t, size_t>> histogram;  // colour → pixels, most common first
};
PngContent measure(const PngImage& image);

}  // namespace sluice::test
