#include <cctype>

#include "relmem/common.hpp"
#include "relmem/device/cuda_device.hpp"

namespace relmem::gpu {

int parse_cuda_device(const std::string& device) {
  if (device == "cuda") return 0;
  const std::string prefix = "cuda:";
  const bool prefixed = device.compare(0, prefix.size(), prefix) == 0;
  if (prefixed && device.size() > prefix.size() && device.size() <= prefix.size() + 4) {
    const std::string number = device.substr(prefix.size());
    bool digits = true;
    for (char ch : number) digits = digits && std::isdigit(static_cast<unsigned char>(ch));
    if (digits) return std::stoi(number);
  }
  throw Error("unknown device '" + device + "' (expected cpu, cuda or cuda:N)");
}

}  // namespace relmem::gpu
