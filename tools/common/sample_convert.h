// Widening client-side sample formats to float32, for tools that read files
// in formats the server does not take directly.
#pragma once

#include "sample_format.h"

#include <cstddef>

namespace audiod {

// Converts `samples` samples of `format` at `src` to floats in [-1, 1).
// Exact for u8, s16 and both s24 layouts; s32 rounds to float's 24 bits.
void convert_to_f32(SampleFormat format, const void* src, float* dst, size_t samples) noexcept;

} // namespace audiod
