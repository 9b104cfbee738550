#pragma once
// The BERT transformer stack (embeddings, N post-norm encoder layers) over token sequences laid end to end.
// Dense layers run on the packed GEMM kernels; attention runs per sequence and head, so that every token attends to
// the tokens of its own sequence only: a padded batch's attention mask, without the padding.
#include <string>
#include <vector>

#include "../linalg/packed_gemm.hpp"
#include "relmem/common.hpp"
#include "relmem/encoders/safetensors.hpp"

namespace relmem {

struct BertConfig {
  enum class Activation { kGeluErf, kGeluTanh, kRelu };

  int hidden_size = 0;
  int heads = 0;
  int layers = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  int max_positions = 0;
  int type_vocab_size = 0;
  float layer_norm_eps = 1e-12f;
  Activation activation = Activation::kGeluErf;

  // Hugging Face config.json of a BertModel; relmem::Error for other model types or missing/invalid fields.
  static BertConfig read(const std::string& config_file);
};

class BertModel {
 public:
  // `storage`: how the encoder layers' dense weights are kept (BertEncoderOptions::half_weights).
  BertModel(const BertConfig& config, const SafetensorsFile& weights, gemm::Storage storage);

  const BertConfig& config() const { return config_; }
  // How the dense weights are held: kHalf only where the CPU's kernel reads fp16 (gemm::PackedMatrix::pack).
  gemm::Storage weight_storage() const {
    return layers_.empty() ? gemm::Storage::kFloat : layers_[0].qkv.weight.storage();
  }

  // Hidden states after the bottom `layers` layers (all when negative), one row per token: rows offsets[s] ..
  // offsets[s+1]-1 belong to sequences[s]. Ids must be inside the vocabulary and sequences no longer than
  // max_positions (the caller checks).
  RowMatrix forward(const std::vector<const std::vector<int32_t>*>& sequences, const std::vector<Eigen::Index>& offsets,
                    int layers = -1) const;

 private:
  struct Dense {
    gemm::PackedMatrix weight;
    std::vector<float> bias;
  };
  struct LayerNorm {
    Eigen::RowVectorXf gamma, beta;
  };
  struct Layer {
    Dense qkv;  // query, key and value side by side: one product for all three
    Dense attention_output;
    LayerNorm attention_norm;
    Dense intermediate;
    Dense output;
    LayerNorm output_norm;
  };

  void self_attention(const RowMatrix& qkv, const std::vector<Eigen::Index>& offsets, RowMatrix& context) const;
  void layer_norm(const LayerNorm& norm, RowMatrix& x) const;
  void activate(RowMatrix& x) const;

  BertConfig config_;
  RowMatrix word_embeddings_, position_embeddings_;
  Eigen::RowVectorXf token_type_embedding_;  // row 0: every token is in segment A
  LayerNorm embedding_norm_;
  std::vector<Layer> layers_;
};

}  // namespace relmem
