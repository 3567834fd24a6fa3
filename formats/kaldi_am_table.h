// Kaldi tables of AmDiagGmm objects: what gmm-adapt-map writes to its map-am-wspecifier (Kaldi's
// MapAmDiagGmmWriter) and gmm-latgen-map reads, one adapted model per speaker or utterance. Each
// entry is "KEY " and then the AmDiagGmm alone, no transition model, as Kaldi's object holder
// writes it:
//   binary  "\0B" <DIMENSION> ... <NUMPDFS> ... and each pdf's <DiagGMM> ... </DiagGMM>
//   text    "<DIMENSION> 39 <NUMPDFS> 127 <DiagGMM> \n<GCONSTS>  [ ... ]" ... (",t" specifiers)
// (formats/kaldi_model.h writes the same objects inside model files), through every specifier of
// formats/table_entries.h.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "formats/kaldi_tables.h"
#include "formats/table_entries.h"
#include "model/gmm_model.h"

namespace gmmscore {

class AmDiagGmmTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<AmDiagGmmTableWriter>> Open(const std::string& wspecifier);
  // Writes the model's GMMs; its HMM, if any, is not part of the entry.
  absl::Status Write(const std::string& key, const GmmModel& model);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

// Reads the entries back ("ark:" and "scp:", binary or text), each as a model without HMM.
class AmDiagGmmTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<AmDiagGmmTableReader>> Open(const std::string& rspecifier);
  // Reads the next entry; returns false at the end of the table. Errors name the entry.
  absl::StatusOr<bool> Next(std::string* key, GmmModel* model);

 private:
  explicit AmDiagGmmTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

}  // namespace gmmscore
