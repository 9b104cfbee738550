#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/encoders/bert_encoder.hpp"
#include "relmem/encoders/tokenizers/wordpiece.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

void bind_bert(py::module_& m) {
  py::class_<WordPieceTokenizer>(m, "WordPieceTokenizer", "BERT basic tokenization + WordPiece over a vocab.txt")
      .def_static("from_directory", &WordPieceTokenizer::from_directory, py::arg("model_dir"))
      .def("tokenize", &WordPieceTokenizer::tokenize, py::arg("text"), "Word pieces, without [CLS]/[SEP].")
      .def("encode", &WordPieceTokenizer::encode, py::arg("text"), "[CLS] pieces [SEP] ids, truncated to max_length.")
      .def("token_id", &WordPieceTokenizer::token_id, py::arg("token"))
      .def_property_readonly("vocab_size", &WordPieceTokenizer::vocab_size)
      .def_property_readonly("max_length", [](const WordPieceTokenizer& t) { return t.options().max_length; });

  py::class_<BertEncoder, Encoder, std::shared_ptr<BertEncoder>>(
      m, "BertEncoder", "BERT sentence encoder over a Hugging Face / sentence-transformers directory")
      .def(py::init([](const std::string& model_dir, bool normalize, int max_length, int batch_size) {
             BertEncoderOptions options;
             options.normalize = normalize;
             options.max_length = max_length;
             options.batch_size = batch_size;
             return std::make_shared<BertEncoder>(model_dir, options);
           }),
           py::arg("model_dir"), py::kw_only(), py::arg("normalize") = true, py::arg("max_length") = 0,
           py::arg("batch_size") = 32)
      .def_property_readonly("max_length", &BertEncoder::max_length)
      .def_property_readonly("tokenizer", &BertEncoder::tokenizer, py::return_value_policy::reference_internal);
}

}  // namespace relmem_python
