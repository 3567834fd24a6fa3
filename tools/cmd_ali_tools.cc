// Kaldi's alignment converters (run under their names): ali-to-pdf, ali-to-phones (phone
// sequences, per-frame phones, lengths or CTM lines, cut as align/phone_segments.h cuts them) and
// copy-int-vector, which train_mono.sh, align_si.sh and steps/diagnostic/analyze_alignments.sh
// run on alignments.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "align/phone_segments.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Every transition-id of an alignment checked against the model (Kaldi asserts; we say where).
absl::Status CheckAlignment(const TransitionModel& tm, const std::string& key,
                            const std::vector<int32_t>& alignment) {
  for (size_t t = 0; t < alignment.size(); ++t) {
    if (alignment[t] < 1 || alignment[t] > tm.NumTransitionIds()) {
      return absl::InvalidArgumentError(
          absl::StrCat("utterance ", key, ", frame ", t, ": transition-id ", alignment[t],
                       " is not in the model (1..", tm.NumTransitionIds(), ")"));
    }
  }
  return absl::OkStatus();
}

// Runs convert(key, alignment) over a table of alignments; returns how many were converted.
template <typename Convert>
absl::StatusOr<int64_t> ForEachAlignment(const std::string& rspecifier, const TransitionModel& tm,
                                         Convert convert) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableReader> reader,
                       Int32VectorTableReader::Open(rspecifier));
  int64_t done = 0;
  std::string key;
  std::vector<int32_t> alignment;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &alignment));
    if (!more) return done;
    GMM_RETURN_IF_ERROR(CheckAlignment(tm, key, alignment));
    GMM_RETURN_IF_ERROR(convert(key, alignment));
    ++done;
  }
}

struct PhoneOutput {
  bool per_frame = false;
  bool write_lengths = false;
  bool ctm = false;
  float frame_shift = 0.01f;
};

absl::StatusOr<int64_t> AliToPhones(const TransitionModel& tm, const std::string& in,
                                    const std::string& out, const PhoneOutput& opts) {
  std::unique_ptr<Int32VectorTableWriter> phones;
  std::unique_ptr<Int32PairVectorTableWriter> lengths;
  std::unique_ptr<OutputStream> ctm;
  if (opts.ctm) {
    GMM_ASSIGN_OR_RETURN(ctm, OutputStream::Open(out));
  } else if (opts.write_lengths) {
    GMM_ASSIGN_OR_RETURN(lengths, Int32PairVectorTableWriter::Open(out));
  } else {
    GMM_ASSIGN_OR_RETURN(phones, Int32VectorTableWriter::Open(out));
  }
  GMM_ASSIGN_OR_RETURN(
      const int64_t done,
      ForEachAlignment(in, tm, [&](const std::string& key, const std::vector<int32_t>& alignment) {
        const std::vector<PhoneSegment> segments = SplitToPhones(tm, alignment);
        if (ctm != nullptr) {
          ctm->stream() << CtmLines(key, segments, opts.frame_shift);
          return absl::OkStatus();
        }
        if (lengths != nullptr) {
          std::vector<std::pair<int32_t, int32_t>> pairs;
          for (const PhoneSegment& s : segments) pairs.push_back({s.phone, s.frames});
          return lengths->Write(key, pairs);
        }
        std::vector<int32_t> sequence;
        for (const PhoneSegment& s : segments) {
          sequence.insert(sequence.end(), opts.per_frame ? s.frames : 1, s.phone);
        }
        return phones->Write(key, sequence);
      }));
  if (ctm != nullptr) GMM_RETURN_IF_ERROR(ctm->Close());
  if (lengths != nullptr) GMM_RETURN_IF_ERROR(lengths->Close());
  if (phones != nullptr) GMM_RETURN_IF_ERROR(phones->Close());
  return done;
}

}  // namespace

int RunAliToPdf(int argc, char** argv) {
  Args args("ali-to-pdf",
            "[options] MODEL ALIGNMENTS-RSPECIFIER PDFS-WSPECIFIER\n"
            "Converts alignments (transition-ids) to pdf-ids.\n"
            "e.g.: ali-to-pdf 1.mdl ark:1.ali ark,t:-");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  auto model = ReadKaldiModelFile(pos[0]);
  if (!model.ok()) return Fail("ali-to-pdf", model.status());
  const TransitionModel& tm = model->hmm();
  auto writer = Int32VectorTableWriter::Open(pos[2]);
  if (!writer.ok()) return Fail("ali-to-pdf", writer.status());
  auto done = ForEachAlignment(pos[1], tm, [&](const std::string& key, std::vector<int32_t> ali) {
    for (int32_t& id : ali) id = tm.TransitionIdToPdf(id);
    return (*writer)->Write(key, ali);
  });
  if (!done.ok()) return Fail("ali-to-pdf", done.status());
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail("ali-to-pdf", s);
  KaldiLog(stderr, "LOG", "ali-to-pdf",
           absl::StrCat("Converted ", *done, " alignments to pdf sequences."));
  return 0;
}

int RunAliToPhones(int argc, char** argv) {
  Args args("ali-to-phones",
            "[options] MODEL ALIGNMENTS-RSPECIFIER (PHONES-WSPECIFIER|CTM-WXFILENAME)\n"
            "Converts alignments to phone sequences (or, with --ctm-output, CTM lines).\n"
            "e.g.: ali-to-phones 1.mdl ark:1.ali ark,t:-");
  PhoneOutput opts;
  args.Register("ctm-output", &opts.ctm, "write CTM lines (confidences omitted)")
      .Register("frame-shift", &opts.frame_shift, "frame shift for the CTM times")
      .Register("per-frame", &opts.per_frame,
                "write the phone of each frame (else the phone sequence)")
      .Register("write-lengths", &opts.write_lengths, "write (phone, frames) pairs");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (opts.per_frame && opts.write_lengths) {
    return Fail("ali-to-phones",
                absl::InvalidArgumentError("--per-frame and --write-lengths are incompatible"));
  }
  if (pos.size() != 3) return Usage(args);
  auto model = ReadKaldiModelFile(pos[0]);
  if (!model.ok()) return Fail("ali-to-phones", model.status());
  auto done = AliToPhones(model->hmm(), pos[1], pos[2], opts);
  if (!done.ok()) return Fail("ali-to-phones", done.status());
  KaldiLog(stderr, "LOG", "ali-to-phones", absl::StrCat("Done ", *done, " utterances."));
  return 0;
}

int RunCopyIntVector(int argc, char** argv) {
  Args args("copy-int-vector",
            "[options] VECTOR-IN-RSPECIFIER VECTOR-OUT-WSPECIFIER\n"
            "Copies tables of integer vectors (e.g. alignments), binary or text.\n"
            "e.g.: copy-int-vector 'ark:gunzip -c ali.1.gz|' ark,t:-");
  bool binary = true;  // accepted, as Kaldi's is: the wspecifier says how the table is written
  args.Register("binary", &binary, "write in binary mode (only relevant if the output is a file)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  auto copy = [&]() -> absl::StatusOr<int64_t> {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableReader> reader,
                         Int32VectorTableReader::Open(pos[0]));
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableWriter> writer,
                         Int32VectorTableWriter::Open(pos[1]));
    int64_t done = 0;
    std::string key;
    std::vector<int32_t> value;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &value));
      if (!more) break;
      GMM_RETURN_IF_ERROR(writer->Write(key, value));
      ++done;
    }
    GMM_RETURN_IF_ERROR(writer->Close());
    return done;
  };
  auto done = copy();
  if (!done.ok()) return Fail("copy-int-vector", done.status());
  KaldiLog(stderr, "LOG", "copy-int-vector", absl::StrCat("Copied ", *done, " vectors of int32."));
  return *done != 0 ? 0 : 1;
}

}  // namespace gmmscore
