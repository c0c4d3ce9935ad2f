// The pulse server's way to the engine, which lives on the control thread
// (Engine: "Thread: control, for every member").
//
// The pulse thread posts a job: a function the control thread runs with
// the engine, which returns the answer — a function the pulse thread then
// runs (it replies to the client, say). Each direction is a queue guarded
// by a mutex and signalled by an eventfd that the other thread's epoll loop
// watches. Neither thread ever waits for the other: a job is answered when
// it is done, and the pulse thread serves its other clients meanwhile.
// (The mutex is held only to move a vector; neither thread is a real-time
// one.)
#pragma once

#include "protocol/messages.h"
#include "protocol/unique_fd.h"

#include <functional>
#include <mutex>
#include <vector>

namespace audiod {

class Engine;

namespace pulse {

class EngineGateway {
public:
    using Answer = std::function<void()>;
    using Job = std::function<Answer(Engine&)>;

    EngineGateway();
    EngineGateway(const EngineGateway&) = delete;
    EngineGateway& operator=(const EngineGateway&) = delete;

    // Thread: pulse. Queues a job for the control thread.
    void post(Job job);
    // Thread: control. Readable while jobs wait.
    [[nodiscard]] int jobs_fd() const noexcept { return jobs_fd_.get(); }
    // Thread: control. Runs the waiting jobs and queues their answers.
    void run_jobs(Engine& engine);

    // Thread: control. Queues a function for the pulse thread that is not
    // an answer to a job (an engine event, for SUBSCRIBE).
    void tell(Answer note);
    // An engine event (what `audioctl watch` shows), handed to the pulse
    // thread for SUBSCRIBE. Set (or cleared) the handler only while the
    // control thread is not serving: without one, events are not queued.
    using EventHandler = std::function<void(const proto::Event&)>;
    void set_event_handler(EventHandler handler) { event_handler_ = std::move(handler); }
    // Thread: control.
    void publish(const proto::Event& event);

    // Thread: pulse. Readable while answers wait.
    [[nodiscard]] int answers_fd() const noexcept { return answers_fd_.get(); }
    // Thread: pulse. Runs the waiting answers, in order.
    void run_answers();

private:
    std::mutex mutex_;
    std::vector<Job> jobs_;       // guarded by mutex_
    std::vector<Answer> answers_; // guarded by mutex_
    UniqueFd jobs_fd_;
    UniqueFd answers_fd_;
    EventHandler event_handler_;
};

} // namespace pulse
} // namespace audiod
