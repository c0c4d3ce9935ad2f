// The RTP loop: a player on rtp-out, an RTP sink (L16, 5 ms packets) that
// sends to the tests' relay (audiod-udp-relay: 1 % loss in bursts of two,
// up to 1 ms of jitter), which passes the packets on to an RTP source that
// plays on rtp-land. Both ends are this server's, on one clock, so the
// source plays at exactly the nominal rate and the numbers come through
// bit-exact; a lost packet is concealed by its predecessor fading out,
// read as frames at another gain. rtp-land's recording is the player's
// echo, judged as a life of its own (kEchoLife + its life).
#include "soak.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace audiod::soak {

bool Soak::rtp_loop_wanted() const {
    return !o_.pipewire && !o_.common && std::filesystem::exists(tool("audiod-udp-relay"));
}

void Soak::start_rtp_loop() {
    if (rtp_port_ == 0) {
        return;
    }
    relay_ = spawn({tool("audiod-udp-relay"), "--listen", std::to_string(rtp_port_), "--to",
                    "127.0.0.1:" + std::to_string(rtp_port_ + 2), "--loss", "1", "--burst-length",
                    "2", "--jitter-ms", "1", "--seed", std::to_string(o_.seed)},
                   dir_ + "/relay.log");
    // The echo's numbers unwrap against the player's own latest, read on
    // rtp-out every moment: the echo alone may read nothing for longer
    // than half the numbers' wrap (21.8 s) while the source resamples,
    // and unwrapped against its own stale latest it read as played twice
    // (CI, after a restart: frames of 60 s read as those of 16 s).
    recorders_.push_back(std::make_unique<Recorder>("rtp-land", latest_, start_));
    if (Player* p = start_player("rtp-out", Kind::libaudiod)) {
        p->rtp = true;
    }
}

void Soak::stop_rtp_loop() {
    if (relay_ <= 0) {
        return;
    }
    kill(relay_, SIGTERM);
    wait_for(relay_, 5000);
    relay_ = -1;
    std::ifstream said(dir_ + "/relay.log");
    for (std::string line; std::getline(said, line);) {
        if (line.find('{') != std::string::npos) {
            relay_said_ = line;
        }
    }
}

} // namespace audiod::soak
