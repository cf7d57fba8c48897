#pragma once
// The job token: the shared secret every client of a job's store presents in its HELLO.
// Whoever starts a job makes one (crew launch, spawn) and hands it to the workers as
// CREW_JOB_TOKEN; a job started by srun or mpirun gets it from the user (CREW_JOB_TOKEN, or
// CREW_JOB_TOKEN_FILE naming a file only the user can read). See docs/store.md.
#include <string>

namespace crew {

// A fresh secret: 128 bits from the OS, as 32 hex digits.
std::string generate_job_token();

// The token stored in `path`, without surrounding whitespace. `what` names the setting in
// errors ("--token-file", "CREW_JOB_TOKEN_FILE"). Throws ValueError naming it and the path
// when the file is missing, not a regular file, owned by another user, readable by group or
// others, or empty.
std::string read_job_token_file(const std::string& path, const char* what);

}  // namespace crew
