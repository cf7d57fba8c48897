#pragma once
// Output of a worker process (started by `crew launch` or crew::dist::spawn). Its stdout is a
// pipe, which C stdio block-buffers, so without this a worker's lines reach workerlog.N only at
// exit, and a crash loses them. In a process whose environment has CREW_RANK (every worker of
// the launcher and of spawn), a static initialiser in crew_core (linked into every program by
// crew_core's `-u crew_worker_stdio_anchor` link option) calls setup_worker_stdio() before main.
//
//   crew::setup_worker_stdio();  // idempotent; spawn's child hook calls it before fn runs
namespace crew {

// When CREW_RANK is set: makes stdout line-buffered and, for SIGSEGV, SIGABRT, SIGBUS, SIGFPE
// and SIGILL whose handler is still the default, installs a best-effort flush of stdout and
// stderr that then re-raises the signal with its default action. Returns whether it applied.
bool setup_worker_stdio();

}  // namespace crew

// Referenced by the linker option above so the initialiser's object is never dropped.
extern "C" void crew_worker_stdio_anchor();
