#include "pulse/engine_gateway.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace audiod::pulse {

namespace {

void signal(int fd) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t r = ::write(fd, &one, sizeof one);
}

void clear(int fd) {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t r = ::read(fd, &count, sizeof count);
}

} // namespace

EngineGateway::EngineGateway()
    : jobs_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))
    , answers_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

void EngineGateway::post(Job job) {
    {
        const std::lock_guard lock(mutex_);
        jobs_.push_back(std::move(job));
    }
    signal(jobs_fd_.get());
}

void EngineGateway::run_jobs(Engine& engine) {
    clear(jobs_fd_.get());
    std::vector<Job> jobs;
    {
        const std::lock_guard lock(mutex_);
        jobs.swap(jobs_);
    }
    if (jobs.empty()) {
        return;
    }
    std::vector<Answer> answers;
    answers.reserve(jobs.size());
    for (Job& job : jobs) {
        if (Answer answer = job(engine)) {
            answers.push_back(std::move(answer));
        }
    }
    if (answers.empty()) {
        return;
    }
    {
        const std::lock_guard lock(mutex_);
        for (Answer& answer : answers) {
            answers_.push_back(std::move(answer));
        }
    }
    signal(answers_fd_.get());
}

void EngineGateway::tell(Answer note) {
    {
        const std::lock_guard lock(mutex_);
        answers_.push_back(std::move(note));
    }
    signal(answers_fd_.get());
}

void EngineGateway::publish(const proto::Event& event) {
    if (event_handler_) {
        tell([handler = event_handler_, event] { handler(event); });
    }
}

void EngineGateway::run_answers() {
    clear(answers_fd_.get());
    std::vector<Answer> answers;
    {
        const std::lock_guard lock(mutex_);
        answers.swap(answers_);
    }
    for (Answer& answer : answers) {
        answer();
    }
}

} // namespace audiod::pulse
