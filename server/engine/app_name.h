// Application names: what a client declares (else its executable's name),
// and, on a system-wide server, the per-user form "UID/NAME" under which the
// server keeps each user's application apart (control/access_policy.h).
// Thread: any.
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

namespace audiod {

// 1 to 64 bytes without control characters: the names the server keeps.
[[nodiscard]] bool is_valid_app_name(std::string_view name);

// "UID/NAME", the name of user UID's application NAME on a shared server.
[[nodiscard]] std::string user_app_name(uid_t uid, std::string_view name);

// Whether `app` is a user's ("1000/mpv"), and the NAME part of it ("mpv");
// any other name is itself.
[[nodiscard]] bool is_user_app_name(std::string_view app);
[[nodiscard]] std::string_view bare_app_name(std::string_view app);

} // namespace audiod
