// Bytes that stay valid as long as someone holds them: a view and the owner that keeps the
// bytes it views alive (a string of their own, or a buffer lent by a device,
// BatchSlot::LendEncoded16). Copying one copies the reference, not the bytes.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace gmmscore {

struct SharedBytes {
  std::shared_ptr<const void> owner;
  std::string_view view;

  // Bytes of their own.
  static SharedBytes Own(std::string bytes) {
    auto s = std::make_shared<const std::string>(std::move(bytes));
    return {s, *s};
  }
  bool empty() const { return view.empty(); }
};

}  // namespace gmmscore
