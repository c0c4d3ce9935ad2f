#include "common/tone_analysis.h"

#include <algorithm>
#include <cmath>

namespace audiod {

ToneMeasure measure_tone(const float* samples, size_t count, size_t stride, double frequency,
                         double rate) {
    const double w = 2 * M_PI * frequency / rate;
    // Normal equations of the fit against the basis {sin, cos, 1}.
    double m[3][3] = {};
    double v[3] = {};
    for (size_t i = 0; i < count; ++i) {
        const double x = samples[i * stride];
        const double basis[3] = {std::sin(w * double(i)), std::cos(w * double(i)), 1.0};
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 3; ++c) {
                m[r][c] += basis[r] * basis[c];
            }
            v[r] += basis[r] * x;
        }
    }
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
    for (size_t i = 0; i < count; ++i) {
        const double fit = k[0] * std::sin(w * double(i)) + k[1] * std::cos(w * double(i));
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
