#include "support/tone_analysis.h"

#include <algorithm>
#include <cmath>

namespace audiod {

namespace {

// sin(w·i) and cos(w·i) for i = 0, 1, 2...: a phasor turned by w each
// sample, set exactly every 256 samples so that rounding cannot build up
// (it stays near 1e-14, far below the -150 dB of a float's own noise).
// Two libm calls per 256 samples instead of two per sample: the analysis
// of a 20 s tone in the sanitizer builds took two minutes with them.
class Oscillator {
public:
    explicit Oscillator(double w)
        : w_(w)
        , step_sin_(std::sin(w))
        , step_cos_(std::cos(w)) {}

    // Moves to sample `i`, the one after the last (or the first).
    void at(size_t i) {
        if (i % kExact == 0) {
            sin_ = std::sin(w_ * double(i));
            cos_ = std::cos(w_ * double(i));
        } else {
            const double s = sin_ * step_cos_ + cos_ * step_sin_;
            cos_ = cos_ * step_cos_ - sin_ * step_sin_;
            sin_ = s;
        }
    }
    [[nodiscard]] double sin() const { return sin_; }
    [[nodiscard]] double cos() const { return cos_; }

private:
    static constexpr size_t kExact = 256;
    double w_;
    double step_sin_;
    double step_cos_;
    double sin_ = 0;
    double cos_ = 1;
};

} // namespace

ToneMeasure measure_tone(const float* samples, size_t count, size_t stride, double frequency,
                         double rate) {
    const double w = 2 * M_PI * frequency / rate;
    // Normal equations of the fit against the basis {sin, cos, 1}.
    double m[3][3] = {};
    double v[3] = {};
    Oscillator osc(w);
    for (size_t i = 0; i < count; ++i) {
        osc.at(i);
        const double x = samples[i * stride];
        const double s = osc.sin();
        const double c = osc.cos();
        m[0][0] += s * s;
        m[0][1] += s * c;
        m[0][2] += s;
        m[1][1] += c * c;
        m[1][2] += c;
        v[0] += s * x;
        v[1] += c * x;
        v[2] += x;
    }
    m[1][0] = m[0][1];
    m[2][0] = m[0][2];
    m[2][1] = m[1][2];
    m[2][2] = double(count);
    for (int p = 0; p < 3; ++p) {
        for (int r = p + 1; r < 3; ++r) {
            const double f = m[r][p] / m[p][p];
            for (int c = p; c < 3; ++c) {
                m[r][c] -= f * m[p][c];
            }
            v[r] -= f * v[p];
        }
    }
    double k[3] = {};
    for (int r = 2; r >= 0; --r) {
        double s = v[r];
        for (int c = r + 1; c < 3; ++c) {
            s -= m[r][c] * k[c];
        }
        k[r] = s / m[r][r];
    }
    double tone = 0;
    double residual = 0;
    Oscillator again(w);
    for (size_t i = 0; i < count; ++i) {
        again.at(i);
        const double fit = k[0] * again.sin() + k[1] * again.cos();
        const double e = samples[i * stride] - fit - k[2];
        tone += fit * fit;
        residual += e * e;
    }
    ToneMeasure out;
    out.amplitude = std::hypot(k[0], k[1]);
    out.thd_n_db = tone > 0 ? 10 * std::log10(std::max(residual, 1e-300) / tone) : 0;
    return out;
}

} // namespace audiod
