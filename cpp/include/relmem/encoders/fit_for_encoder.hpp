#pragma once
// Constants fitted on one encoder's scores (an untrained calibration, a value confidence model) are kept in a table
// per encoder name; the first entry is the fit an encoder without one of its own gets.
#include <cstddef>
#include <string>

namespace relmem {

// The entry of `fits` whose `encoder` is `encoder` or the family of `encoder` ("minilm" for "minilm:DIR", a
// directory of that model fine-tuned), else fits[0].
template <typename Entry, std::size_t N>
const Entry& fit_for_encoder(const Entry (&fits)[N], const std::string& encoder) {
  const std::string family = encoder.substr(0, encoder.find(':'));
  for (const Entry& entry : fits)
    if (family == entry.encoder) return entry;
  return fits[0];
}

}  // namespace relmem
