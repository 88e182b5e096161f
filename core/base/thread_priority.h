// thread_priority.h: a thread that does work which can wait gives the CPU to
// the threads that answer calls (health, small requests).
//
// LowerThisThreadsPriority raises the calling thread's nice value by `nice`
// (on Linux a thread's nice value is its own, threads it starts inherit it).
// Best effort: when the priority cannot be read or set, it stays as it was.
// Lowering needs no privilege; the value is capped at 19 by the kernel.
// Thread-safe (it touches only the calling thread).
#ifndef INVARIANT_CORE_BASE_THREAD_PRIORITY_H_
#define INVARIANT_CORE_BASE_THREAD_PRIORITY_H_

namespace invariant {

// Does nothing for `nice` <= 0.
void LowerThisThreadsPriority(int nice);

// The calling thread's nice value (0 when it cannot be read).
int ThisThreadsNice();

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_THREAD_PRIORITY_H_
