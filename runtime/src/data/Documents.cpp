//===- Documents.cpp - Rows packed with documents ---------------*- C++ -*-===//
//
// docs:PATH reads documents, each a sequence of byte tokens (as text:):
// the regular files of a directory (sorted by name; names starting with
// '.' skipped) or the "text" fields of a JSONL file, one object per line.
// synthetic-docs draws `count` documents of lognormal lengths (median,
// sigma) with uniform tokens. The documents, in order, form one stream that
// rows read in windows exactly as text: reads a file, so no token is
// padding and none is dropped; each token also gets its document
// (segments) and its position in it (positions), which a model compiled
// with gpt:...,docs=1 uses to keep attention inside documents
// (docs/sequences.md).
//
//===----------------------------------------------------------------------===//

#include "data/Documents.h"
#include "loom/runtime/Error.h"
#include "loom/runtime/Progress.h"
#include "loom/runtime/Random.h"
#include "loom/runtime/SequencePlan.h"
#include "support/FileUtil.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace loom::rt {

int64_t streamWindows(const std::string &spec, int64_t count, int64_t seq) {
  if (count < seq + 1)
    fail("%s has %lld tokens, but one row of seq %lld needs at least %lld "
         "(tokens plus the shifted target)",
         spec.c_str(), static_cast<long long>(count),
         static_cast<long long>(seq), static_cast<long long>(seq + 1));
  return (count - 1) / seq;
}

int64_t windowStart(const DataOptions &options, int64_t row, int64_t count,
                    int64_t seq) {
  if (options.shuffle)
    return static_cast<int64_t>(
        CounterRng::forName(options.seed, "data.shuffle")
            .substream(static_cast<uint64_t>(row))
            .below(count - seq));
  return row % ((count - 1) / seq) * seq;
}

void fillDocumentRow(const std::vector<int64_t> &starts, int64_t start,
                     int64_t seq, int32_t *segments, int32_t *positions) {
  auto doc = std::upper_bound(starts.begin(), starts.end(), start) - 1;
  for (int64_t t = 0; t < seq; ++t) {
    const int64_t at = start + t;
    while (doc + 1 != starts.end() && *(doc + 1) <= at)
      ++doc;
    // Only equality of segments matters, within a row: the index wraps
    // past 2^31 documents harmlessly.
    segments[t] = static_cast<int32_t>(doc - starts.begin());
    positions[t] = static_cast<int32_t>(at - std::max(*doc, start));
  }
}

namespace {

/// The documents of a source, concatenated.
struct DocumentStream {
  std::vector<int32_t> tokens;
  std::vector<int64_t> starts;
  /// Where each document came from, for messages ("a.txt", "line 7").
  std::vector<std::string> names;

  void add(std::string name, const unsigned char *bytes, size_t n,
           const std::string &spec) {
    if (n == 0)
      fail("%s: document %s is empty (a document needs at least one token)",
           spec.c_str(), name.c_str());
    starts.push_back(static_cast<int64_t>(tokens.size()));
    tokens.insert(tokens.end(), bytes, bytes + n);
    names.push_back(std::move(name));
  }
  int64_t length(size_t i) const {
    int64_t end = i + 1 < starts.size() ? starts[i + 1]
                                        : static_cast<int64_t>(tokens.size());
    return end - starts[i];
  }
};

DocumentStream readDirectory(const std::string &spec, const std::string &path) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(path, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().filename().string()[0] != '.')
      files.push_back(it->path());
  if (ec)
    fail("%s: cannot list %s: %s", spec.c_str(), path.c_str(),
         ec.message().c_str());
  std::sort(files.begin(), files.end());
  DocumentStream stream;
  for (const auto &file : files) {
    std::vector<char> bytes = readFileBytes(file.string());
    stream.add(file.filename().string(),
               reinterpret_cast<const unsigned char *>(bytes.data()),
               bytes.size(), spec);
  }
  return stream;
}

DocumentStream readJsonl(const std::string &spec, const std::string &path) {
  std::ifstream in(path);
  if (!in)
    fail("%s: cannot read %s", spec.c_str(), path.c_str());
  DocumentStream stream;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    const std::string where = path + ":" + std::to_string(number);
    nlohmann::json doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_object())
      fail("%s: %s: not a JSON object", spec.c_str(), where.c_str());
    auto text = doc.find("text");
    if (text == doc.end() || !text->is_string())
      fail("%s: %s: the object has no string field \"text\"", spec.c_str(),
           where.c_str());
    const std::string &s = text->get_ref<const std::string &>();
    stream.add("at line " + std::to_string(number),
               reinterpret_cast<const unsigned char *>(s.data()), s.size(),
               spec);
  }
  return stream;
}

struct SyntheticDocs {
  int64_t median = 256, count = 1000;
  double sigma = 1.0;
};

/// Parses "synthetic-docs[:median=N,sigma=S,count=N]"; returns "" or the
/// problem.
std::string parseSyntheticDocs(const std::string &spec, SyntheticDocs &out) {
  size_t colon = spec.find(':');
  std::string body = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::string usage =
      " (expected synthetic-docs[:median=N,sigma=S,count=N], e.g. "
      "synthetic-docs:median=256,sigma=1,count=1000)";
  size_t pos = 0;
  while (!body.empty() && pos <= body.size()) {
    size_t end = std::min(body.find(',', pos), body.size());
    std::string field = body.substr(pos, end - pos);
    size_t eq = field.find('=');
    std::string key = field.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : field.substr(eq + 1);
    char *rest = nullptr;
    double v = std::strtod(value.c_str(), &rest);
    bool number = !value.empty() && *rest == '\0' && std::isfinite(v);
    if (key == "median" || key == "count") {
      if (!number || v < 1 || v != std::floor(v) || v > 1e12)
        return spec + ": field '" + key + "' must be a positive integer";
      (key == "median" ? out.median : out.count) = static_cast<int64_t>(v);
    } else if (key == "sigma") {
      if (!number || v < 0 || v > 10)
        return spec + ": field 'sigma' must be a number in [0, 10]";
      out.sigma = v;
    } else {
      return spec + ": unknown field '" + key + "'" + usage;
    }
    pos = end + 1;
  }
  return "";
}

DocumentStream drawDocuments(const SyntheticDocs &docs,
                             const DataOptions &options, int64_t vocab,
                             int64_t budget) {
  DocumentStream stream;
  CounterRng lengths = CounterRng::forName(options.seed, "synthetic-docs.len");
  CounterRng tokens = CounterRng::forName(options.seed, "synthetic-docs.tok");
  for (int64_t d = 0; d < docs.count; ++d) {
    double length = std::round(static_cast<double>(docs.median) *
                               std::exp(docs.sigma * lengths.normal()));
    // A synthetic corpus is drawn to fit: its tail stops at the budget.
    int64_t n = std::clamp<int64_t>(static_cast<int64_t>(length), 1, budget);
    stream.starts.push_back(static_cast<int64_t>(stream.tokens.size()));
    stream.names.push_back("number " + std::to_string(d));
    for (int64_t t = 0; t < n; ++t)
      stream.tokens.push_back(
          static_cast<int32_t>(tokens.below(static_cast<uint64_t>(vocab))));
  }
  return stream;
}

class DocumentSource final : public DataSource {
public:
  DocumentSource(std::string spec, DocumentStream docs,
                 const DataOptions &options, const TaskSpec &task)
      : spec(std::move(spec)), docs(std::move(docs)), options(options),
        task(task) {
    count = static_cast<int64_t>(this->docs.tokens.size());
  }

  void fill(int64_t k, const BatchBuffers &out) override {
    if (task.partitioned)
      return fillPlanned(k, out);
    const int64_t batch = task.batch, seq = task.seq;
    const int64_t firstRow = globalRow(options, k, batch, 0);
    for (int64_t i = 0; i < batch; ++i) {
      const int64_t start = windowStart(options, firstRow + i, count, seq);
      std::copy_n(docs.tokens.begin() + start, seq, out.tokens + i * seq);
      std::copy_n(docs.tokens.begin() + start + 1, seq, out.targets + i * seq);
      fillDocumentRow(docs.starts, start, seq, out.segments + i * seq,
                      out.positions + i * seq);
    }
  }

  std::string describe() const override {
    std::vector<int64_t> lengths(docs.starts.size());
    for (size_t i = 0; i < lengths.size(); ++i)
      lengths[i] = docs.length(i);
    std::sort(lengths.begin(), lengths.end());
    auto at = [&](double q) {
      return std::to_string(lengths[static_cast<size_t>(
          q * static_cast<double>(lengths.size() - 1))]);
    };
    // Packed rows cut documents at the rows; a partitioned model at its
    // context, from each document's start.
    const int64_t longest = task.partitioned ? task.contextLength() : task.seq;
    const int64_t cut =
        lengths.end() -
        std::upper_bound(lengths.begin(), lengths.end(), longest);
    std::string text =
        spec + " (" + std::to_string(lengths.size()) + " documents, " +
        formatCount(static_cast<double>(count)) + " tokens, " +
        (options.shuffle ? "shuffled windows"
                         : std::to_string(windows) + " sequential windows") +
        "; lengths min " + at(0) + ", median " + at(0.5) + ", p90 " + at(0.9) +
        ", max " + at(1);
    if (cut > 0 && !task.partitioned)
      text += "; " + std::to_string(cut) + " longer than a row of " +
              std::to_string(task.seq) +
              " tokens are attended in row-sized pieces";
    else if (cut > 0)
      text += "; " + std::to_string(cut) +
              " longer than the model's context "
              "of " +
              std::to_string(longest) +
              " tokens are attended in pieces of that length";
    return text + ")";
  }

  int64_t rowsPerPass() const override { return options.shuffle ? 0 : windows; }

  std::vector<int64_t> stepDocuments(int64_t k) const override {
    std::vector<int64_t> lengths;
    for (const Span &span : stepSpans(k))
      lengths.push_back(span.end - span.begin);
    return lengths;
  }

  /// Refuses what cannot be trained on; counts the windows.
  void check() {
    if (docs.starts.empty())
      fail("%s: no documents found", spec.c_str());
    windows = streamWindows(spec, count, task.seq);
    const int64_t budget = task.batch * task.seq * options.worldSize;
    for (size_t i = 0; i < docs.starts.size(); ++i)
      if (docs.length(i) > budget)
        fail("%s: document %s has %lld tokens, more than a step's global "
             "budget of %lld (%d ranks x batch %lld x seq %lld): no step could "
             "hold it",
             spec.c_str(), docs.names[i].c_str(),
             static_cast<long long>(docs.length(i)),
             static_cast<long long>(budget), options.worldSize,
             static_cast<long long>(task.batch),
             static_cast<long long>(task.seq));
    for (int64_t i = 0; i < count; ++i) {
      if (docs.tokens[i] < task.vocab)
        continue;
      size_t d = std::upper_bound(docs.starts.begin(), docs.starts.end(), i) -
                 docs.starts.begin() - 1;
      fail("%s: document %s: byte 0x%02X at offset %lld is not below the "
           "model's vocab %lld; documents are raw bytes 0-255, so they need a "
           "model with vocab >= 256",
           spec.c_str(), docs.names[d].c_str(),
           static_cast<unsigned>(docs.tokens[i]),
           static_cast<long long>(i - docs.starts[d]),
           static_cast<long long>(task.vocab));
    }
  }

private:
  /// A document of a step: stream offsets [begin, end).
  struct Span {
    int64_t begin, end;
  };

  /// The documents global batch `k` holds, in stream order: the stream
  /// ranges its rows cover, cut where consecutive rows are not consecutive
  /// in the stream and at document starts; for a partitioned model also
  /// every `context` tokens from a document's start (its positions must
  /// stay below the model's position table's rows).
  std::vector<Span> stepSpans(int64_t k) const {
    DataOptions global = options;
    global.rank = 0;
    global.worldSize = 1;
    const int64_t rows = task.batch * options.worldSize, seq = task.seq;
    const int64_t longest = task.partitioned
                                ? task.contextLength()
                                : std::numeric_limits<int64_t>::max();
    std::vector<Span> spans;
    int64_t begin = -1, end = -1;
    auto flush = [&] {
      // The documents meeting stream range [begin, end).
      auto doc =
          std::upper_bound(docs.starts.begin(), docs.starts.end(), begin) - 1;
      for (int64_t at = begin; at < end; ++doc) {
        int64_t docEnd = doc + 1 != docs.starts.end() ? *(doc + 1) : count;
        const int64_t stop = std::min(docEnd, end);
        for (; at < stop; at += std::min(longest, stop - at))
          spans.push_back({at, at + std::min(longest, stop - at)});
      }
    };
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t start =
          windowStart(global, globalRow(global, k, rows, i), count, seq);
      if (start != end) {
        if (begin >= 0)
          flush();
        begin = start;
      }
      end = start + seq;
    }
    flush();
    return spans;
  }

  /// A partitioned model's batch `k` on this rank: the step's documents
  /// placed by the planner (every rank computes the same plan), this
  /// rank's pieces one after another over its rows. `segments` numbers the
  /// step's documents, `positions` counts from a document's start, so the
  /// pieces of one document on several ranks attend to each other.
  void fillPlanned(int64_t k, const BatchBuffers &out) {
    const std::vector<Span> spans = stepSpans(k);
    std::vector<int64_t> lengths;
    for (const Span &span : spans)
      lengths.push_back(span.end - span.begin);
    const SequencePlanOptions plan =
        stepPlanOptions(options.worldSize, true, task.batch * task.seq);
    int64_t at = 0;
    for (const SequencePiece &p : planSequences(lengths, plan).pieces) {
      if (p.rank != options.rank)
        continue;
      const int64_t from = spans[p.doc].begin + p.begin, n = p.end - p.begin;
      std::copy_n(docs.tokens.begin() + from, n, out.tokens + at);
      std::copy_n(docs.tokens.begin() + from + 1, n, out.targets + at);
      for (int64_t t = 0; t < n; ++t) {
        out.segments[at + t] = static_cast<int32_t>(p.doc);
        out.positions[at + t] = static_cast<int32_t>(p.begin + t);
      }
      at += n;
    }
    // The step holds ranks x batch x seq tokens and no rank takes more
    // than its batch x seq, so each takes exactly that.
    if (at != plan.tokenCapacity)
      fail("sequence plan of batch %lld gave rank %d %lld tokens, not %lld",
           static_cast<long long>(k), options.rank, static_cast<long long>(at),
           static_cast<long long>(plan.tokenCapacity));
  }

  std::string spec;
  DocumentStream docs;
  DataOptions options;
  TaskSpec task;
  int64_t count = 0, windows = 0;
};

} // namespace

std::string syntheticDocsProblem(const std::string &spec) {
  SyntheticDocs docs;
  return parseSyntheticDocs(spec, docs);
}

std::unique_ptr<DataSource> makeDocumentSource(const DataOptions &options,
                                               const TaskSpec &task) {
  const std::string &spec = options.spec;
  if (!task.documents)
    fail("--data %s: this model does not mask documents; compile it with "
         "--model=gpt:...,docs=1 (or read plain token windows with "
         "text:PATH or tokens:PATH)",
         spec.c_str());
  DocumentStream stream;
  if (spec.rfind("synthetic-docs", 0) == 0) {
    SyntheticDocs docs;
    if (std::string problem = parseSyntheticDocs(spec, docs); !problem.empty())
      fail("%s", problem.c_str());
    stream = drawDocuments(docs, options, task.vocab,
                           task.batch * task.seq * options.worldSize);
  } else {
    const std::string path = spec.substr(spec.find(':') + 1);
    std::error_code ec;
    stream = std::filesystem::is_directory(path, ec) ? readDirectory(spec, path)
                                                     : readJsonl(spec, path);
  }
  auto source =
      std::make_unique<DocumentSource>(spec, std::move(stream), options, task);
  source->check();
  return source;
}

} // namespace loom::rt
