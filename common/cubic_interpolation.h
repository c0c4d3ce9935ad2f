// Cubic Hermite (Catmull-Rom) interpolation through four equally spaced
// samples, at fraction t in [0, 1) between y1 and y2: continuous in value
// and slope, so a read position that moves by a changing step (a rate that
// follows another clock) leaves no corners in the waveform. At t = 0 it
// returns y1 exactly.
#pragma once

namespace audiod {

[[nodiscard]] inline float catmull_rom(float y0, float y1, float y2, float y3, double t) noexcept {
    const double a = -0.5 * y0 + 1.5 * y1 - 1.5 * y2 + 0.5 * y3;
    const double b = y0 - 2.5 * y1 + 2 * y2 - 0.5 * y3;
    const double c = -0.5 * y0 + 0.5 * y2;
    return static_cast<float>(((a * t + b) * t + c) * t + y1);
}

} // namespace audiod
