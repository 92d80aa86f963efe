//===- JsonParse.cpp - Parsing JSON from untrusted files --------*- C++ -*-===//
//
// A parser callback sees every object, array and key as it is read, so
// depth and duplicates are checked without a second pass.
//
//===----------------------------------------------------------------------===//

#include "support/JsonParse.h"

#include <set>
#include <vector>

namespace loom::rt {

namespace {

/// Thrown from the callback to stop the parse.
struct Rejected {
  std::string problem;
};

} // namespace

bool parseJson(const char *first, const char *last, nlohmann::json &result,
               std::string &problem) {
  using Event = nlohmann::json::parse_event_t;
  // The keys of each object being read, innermost last.
  std::vector<std::set<std::string>> keys;
  auto callback = [&](int depth, Event event, nlohmann::json &parsed) {
    switch (event) {
    case Event::object_start:
    case Event::array_start:
      if (depth >= kMaxJsonDepth)
        throw Rejected{"nested deeper than " + std::to_string(kMaxJsonDepth) +
                       " levels"};
      if (event == Event::object_start)
        keys.emplace_back();
      break;
    case Event::key:
      if (!keys.back().insert(parsed.get<std::string>()).second)
        throw Rejected{"duplicate key " + parsed.dump()};
      break;
    case Event::object_end:
      keys.pop_back();
      break;
    default:
      break;
    }
    return true;
  };
  try {
    result = nlohmann::json::parse(first, last, callback);
    return true;
  } catch (const Rejected &rejected) {
    problem = rejected.problem;
  } catch (const nlohmann::json::exception &e) {
    // parse_error, or out_of_range for a number beyond a double (1e309).
    problem = e.what();
    size_t bracket = problem.find("] ");
    if (bracket != std::string::npos)
      problem = problem.substr(bracket + 2);
  }
  return false;
}

} // namespace loom::rt
