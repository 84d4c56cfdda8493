// fmt's own implementation (format-inl.h), compiled here once for the whole program.
//
// Debian ships fmt as headers and a shared library. Linking the shared library would cost
// every one-shot command one more library for the loader to map at start-up; FMT_HEADER_ONLY
// avoids that but compiles this implementation again in every file that formats anything
// (about 2.5 s of CPU per file at -O3). So the headers are used in their ordinary mode, and
// this file provides what the shared library would: the functions format-inl.h defines, and
// the two templates format.h declares as instantiated elsewhere, for char.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
