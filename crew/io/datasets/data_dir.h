#pragma once
// Where the data sets look for their files.
#include <string>
#include <vector>

namespace crew::io::detail {

// Candidate directories for a data set, in order: `explicit_dir` alone when given; else
// $CREW_DATA_DIR/<subdir> and $CREW_DATA_DIR when that variable is set; else `default_dir`.
std::vector<std::string> data_dirs(const std::string& explicit_dir, const std::string& subdir,
                                   const std::string& default_dir);
// "a, b, c".
std::string join(const std::vector<std::string>& items, const char* sep = ", ");

}  // namespace crew::io::detail
