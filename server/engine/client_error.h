// An error the engine returns to a client: an AUDIOD_E_* code and a
// sentence saying what went wrong and, where it helps, what to do.
#pragma once

#include <optional>
#include <string>

namespace audiod {

struct ClientError {
    int code = 0;
    std::string message;
};

using MaybeError = std::optional<ClientError>;

} // namespace audiod
