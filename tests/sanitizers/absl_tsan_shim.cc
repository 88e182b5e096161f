// absl_tsan_shim.cc: tells ThreadSanitizer about absl::Mutex (TSan test
// binaries only; see invariant_sanitizer_support in cmake/Sanitizers.cmake).
// Covers absl::Mutex (Lock, the Await and LockWhen families), absl::CondVar
// and absl::Notification.
//
// Debian's libabsl_synchronization is not built with -fsanitize=thread, so
// TSan sees none of the happens-before edges that absl::Mutex and
// absl::CondVar create, and reports every field an absl::Mutex guards as a
// data race (the batcher's and the reload coalescer's, among others). A
// suppression would hide real races in the same functions, so instead this
// file defines the Mutex/CondVar entry points our code calls: each calls the
// library's own function (looked up with dlsym(RTLD_NEXT)) and annotates the
// acquire/release on the mutex's address. A definition in the executable wins
// over the shared library's, so every call from our code comes here.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);

namespace {

#define INVARIANT_SHIM_STR2(x) #x
#define INVARIANT_SHIM_STR(x) INVARIANT_SHIM_STR2(x)

// The library's definition of absl::<suffix> (Itanium mangling, in the
// installed inline namespace, e.g. "debian3"); aborts when it is missing.
// `is_const` for const member functions (mangled _ZNK...).
template <typename Fn>
Fn Real(const char* suffix, bool is_const = false) {
  const char* ns = INVARIANT_SHIM_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name = std::string(is_const ? "_ZNK4absl" : "_ZN4absl") +
                           std::to_string(std::strlen(ns)) + ns + suffix;
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "absl_tsan_shim: %s not found in the loaded Abseil\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// A Condition is evaluated with the mutex held but inside the library (by
// the waiter, or by an unlocking thread on its behalf), where no annotation
// of ours runs: the wrapper annotates around each evaluation.
struct AnnotatedCondition {
  void* mu;
  const absl::Condition* cond;
  static bool Eval(AnnotatedCondition* self) {
    __tsan_acquire(self->mu);
    const bool result = self->cond->Eval();
    __tsan_release(self->mu);
    return result;
  }
};

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::Unlock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

bool Mutex::TryLock() {
  static const auto real = Real<bool (*)(Mutex*)>("5Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::ReaderLock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderUnlock() {
  static const auto real = Real<void (*)(Mutex*)>("5Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real =
      Real<void (*)(Mutex*, const Condition*)>("5Mutex8LockWhenERKNS0_9ConditionE");
  AnnotatedCondition annotated{this, &cond};
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated);
  real(this, &wrapped);
  __tsan_acquire(this);
}

void Mutex::Await(const Condition& cond) {  // releases and re-acquires the lock
  static const auto real =
      Real<void (*)(Mutex*, const Condition*)>("5Mutex5AwaitERKNS0_9ConditionE");
  AnnotatedCondition annotated{this, &cond};
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated);
  __tsan_release(this);
  real(this, &wrapped);
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = Real<bool (*)(Mutex*, const Condition*, absl::Duration)>(
      "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  AnnotatedCondition annotated{this, &cond};
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated);
  __tsan_release(this);
  const bool met = real(this, &wrapped, timeout);
  __tsan_acquire(this);
  return met;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = Real<bool (*)(Mutex*, const Condition*, absl::Time)>(
      "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  AnnotatedCondition annotated{this, &cond};
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated);
  __tsan_release(this);
  const bool met = real(this, &wrapped, deadline);
  __tsan_acquire(this);
  return met;
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real = Real<bool (*)(Mutex*, const Condition*, absl::Duration)>(
      "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  AnnotatedCondition annotated{this, &cond};
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated);
  const bool met = real(this, &wrapped, timeout);
  __tsan_acquire(this);
  return met;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = Real<bool (*)(Mutex*, const Condition*, absl::Time)>(
      "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  AnnotatedCondition annotated{this, &cond};
  const Condition wrapped(&AnnotatedCondition::Eval, &annotated);
  const bool met = real(this, &wrapped, deadline);
  __tsan_acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  static const auto real = Real<void (*)(CondVar*, Mutex*)>("7CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  static const auto real = Real<bool (*)(CondVar*, Mutex*, absl::Time)>(
      "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, deadline);
  __tsan_acquire(mu);
  return timed_out;
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  static const auto real = Real<bool (*)(CondVar*, Mutex*, absl::Duration)>(
      "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}

// Notification: Notify publishes, the waits observe (tests use these to
// hand results from a worker thread to the test's thread).
void Notification::Notify() {
  static const auto real = Real<void (*)(Notification*)>("12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real =
      Real<void (*)(const Notification*)>("12Notification19WaitForNotificationEv", true);
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  static const auto real = Real<bool (*)(const Notification*, absl::Duration)>(
      "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", true);
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static const auto real = Real<bool (*)(const Notification*, absl::Time)>(
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", true);
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
