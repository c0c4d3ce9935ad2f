#include "engine/app_name.h"

#include <algorithm>

namespace audiod {

bool is_valid_app_name(std::string_view name) {
    return !name.empty() && name.size() <= 64 && std::none_of(name.begin(), name.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
}

std::string user_app_name(uid_t uid, std::string_view name) {
    return std::to_string(uid) + "/" + std::string(name);
}

bool is_user_app_name(std::string_view app) {
    const auto slash = app.find('/');
    return slash != std::string_view::npos && slash > 0 &&
           std::all_of(app.begin(), app.begin() + static_cast<std::ptrdiff_t>(slash),
                       [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view bare_app_name(std::string_view app) {
    return is_user_app_name(app) ? app.substr(app.find('/') + 1) : app;
}

} // namespace audiod
