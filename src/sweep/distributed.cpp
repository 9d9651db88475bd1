#include "railsim/sweep/distributed.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <type_traits>

#include "railsim/core/cancel.hpp"

namespace railsim::sweep {

namespace {

// Bytes in a fixed layout: unsigned integers as 8 bytes, least significant first; reals as the
// 8 bytes of their bits (what keeps a gathered table bit for bit the same).
class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void real(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void text(const std::string& s) {
    u64(s.size());
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  std::uint8_t u8() {
    need(1);
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  std::uint64_t u64() {
    need(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double real() { return std::bit_cast<double>(u64()); }
  std::string text() {
    const std::uint64_t n = count(1);
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  // A count of items of at least `item_bytes` each that the rest of the bytes can hold.
  std::uint64_t count(std::uint64_t item_bytes) {
    const std::uint64_t n = u64();
    if (n > (in_.size() - pos_) / item_bytes) bad();
    return n;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(std::size_t n) const {
    if (in_.size() - pos_ < n) bad();
  }
  [[noreturn]] static void bad() {
    throw std::runtime_error("sweep share: bytes cut short or not made by encode_share");
  }
  const std::string& in_;
  std::size_t pos_ = 0;
};

void write_error(Writer& w, const std::optional<InputError>& e) {
  w.u8(e ? 1 : 0);
  if (!e) return;
  w.text(e->field());
  w.text(e->message());
}
std::optional<InputError> read_error(Reader& r) {
  if (r.u8() == 0) return std::nullopt;
  std::string field = r.text();
  std::string message = r.text();
  return InputError(field, message);
}

void write_cell(Writer& w, const report::Cell& c) {
  w.u8(static_cast<std::uint8_t>(c.index()));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          w.text(v);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          w.i64(v);
        } else if constexpr (std::is_same_v<T, double>) {
          w.real(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          w.u8(v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          w.u64(v.size());
          for (std::int64_t x : v) w.i64(x);
        }
      },
      c);
}
report::Cell read_cell(Reader& r) {
  switch (r.u8()) {
    case 0:
      return report::Missing{};
    case 1:
      return r.text();
    case 2:
      return r.i64();
    case 3:
      return r.real();
    case 4:
      return r.u8() != 0;
    case 5: {
      std::vector<std::int64_t> v(r.count(8));
      for (std::int64_t& x : v) x = r.i64();
      return v;
    }
    default:
      throw std::runtime_error("sweep share: unknown cell type");
  }
}

int env_int(const char* name) {  // -1: unset or not a non-negative int
  const char* v = std::getenv(name);
  if (!v) return -1;
  int out = -1;
  const char* end = v + std::strlen(v);
  const auto [p, ec] = std::from_chars(v, end, out);
  return ec == std::errc() && p == end && out >= 0 ? out : -1;
}

}  // namespace

Split parse_split(const std::string& text, const std::string& option) {
  if (text == "contiguous") return Split::contiguous;
  if (text == "strided") return Split::strided;
  throw InputError(option,
                   fmt::format("unknown split '{}'; valid: contiguous, strided", printable(text)));
}

const char* to_string(Split s) {
  return s == Split::contiguous ? "contiguous" : "strided";
}

std::vector<std::size_t> share_of(std::size_t points, int rank, int ranks, Split split) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw std::invalid_argument(fmt::format("share_of: rank {} of {}", rank, ranks));
  const auto r = static_cast<std::size_t>(rank), n = static_cast<std::size_t>(ranks);
  std::vector<std::size_t> mine;
  if (split == Split::strided) {
    for (std::size_t i = r; i < points; i += n) mine.push_back(i);
  } else {
    // Block r: [floor(r P / R), floor((r + 1) P / R)), without overflowing r P.
    auto start = [&](std::size_t k) { return points / n * k + points % n * k / n; };
    for (std::size_t i = start(r); i < start(r + 1); ++i) mine.push_back(i);
  }
  return mine;
}

std::optional<Launch> launched_by_mpi() {
  for (const auto& [rank_var, size_var] :
       {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, std::pair{"PMIX_RANK", ""},
        std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    const int rank = env_int(rank_var);
    if (rank < 0) continue;
    const int size = *size_var ? env_int(size_var) : -1;
    return Launch{rank, size > rank ? size : 0};
  }
  return std::nullopt;
}

void agree(Communicator& comm, const std::function<void()>& step) {
  if (comm.size() == 1) {
    step();
    return;
  }
  // Each rank's outcome: 0 ok; 2 an InputError (field, message); 3 cancelled (the signal as the
  // message); 1 anything else (message).
  std::exception_ptr failure;
  Writer w;
  try {
    step();
    w.u8(0);
  } catch (const Cancelled& e) {
    failure = std::current_exception();
    w.u8(3);
    w.text("");
    w.text(std::to_string(e.signal()));
  } catch (const InputError& e) {
    failure = std::current_exception();
    w.u8(2);
    w.text(e.field());
    w.text(e.message());
  } catch (const std::exception& e) {
    failure = std::current_exception();
    w.u8(1);
    w.text("");
    w.text(e.what());
  } catch (...) {
    failure = std::current_exception();
    w.u8(1);
    w.text("");
    w.text("unknown exception");
  }
  const std::vector<std::string> outcomes = comm.gather(w.take());
  std::string decision;  // empty: every rank succeeded; else the rank and its outcome
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    if (outcomes[r].empty() || outcomes[r][0] == 0) continue;
    Writer d;
    d.u64(r);
    decision = d.take() + outcomes[r];
    break;
  }
  decision = comm.broadcast(decision);
  if (decision.empty()) return;
  Reader rd(decision);
  const auto rank = static_cast<int>(rd.u64());
  const std::uint8_t kind = rd.u8();
  const std::string field = rd.text();
  const std::string message = rd.text();
  if (rank == comm.rank() && failure) std::rethrow_exception(failure);
  const std::string where =
      rank == 0 ? std::string() : fmt::format(" (rank {} of {})", rank, comm.size());
  if (kind == 3) throw Cancelled(std::stoi(message));
  if (kind == 2) throw InputError(field, message + where);
  throw std::runtime_error(message + where);
}

std::vector<std::string> describe_inputs(
    const std::vector<std::pair<std::string, std::string>>& given) {
  std::vector<std::string> lines;
  for (const auto& [name, values] : given) {
    lines.push_back(name + " " + values);
    // Each value that names a readable regular file: its bytes, summarised.
    std::size_t start = 0;
    while (start <= values.size()) {
      const std::size_t end = std::min(values.find(' ', start), values.size());
      const std::string v = values.substr(start, end - start);
      start = end + 1;
      struct stat st {};
      if (v.empty() || ::stat(v.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      std::ifstream in(v, std::ios::binary);
      std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
      std::uint64_t size = 0;
      char buf[1 << 16];
      while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
          h ^= static_cast<unsigned char>(buf[i]);
          h *= 0x100000001b3ull;
        }
        size += static_cast<std::uint64_t>(in.gcount());
      }
      lines.push_back(fmt::format("{} file {}: {} bytes, FNV-1a {:016x}", name, v, size, h));
    }
  }
  return lines;
}

void check_same_inputs(Communicator& comm, const std::vector<std::string>& inputs) {
  if (comm.size() == 1) return;
  Writer w;
  w.u64(inputs.size());
  for (const std::string& line : inputs) w.text(line);
  const std::vector<std::string> all = comm.gather(w.take());
  std::string verdict;  // empty: every rank agrees with rank 0
  for (std::size_t r = 1; r < all.size() && verdict.empty(); ++r) {
    Reader rd(all[r]);
    std::vector<std::string> theirs(rd.count(8));
    for (std::string& line : theirs) line = rd.text();
    if (theirs == inputs) continue;
    std::size_t i = 0;
    while (i < theirs.size() && i < inputs.size() && theirs[i] == inputs[i]) ++i;
    const auto quote = [](const std::vector<std::string>& lines, std::size_t k) {
      return k < lines.size() ? fmt::format("'{}'", printable(lines[k])) : std::string("nothing");
    };
    verdict = fmt::format(
        "rank {} of {} was given other inputs than rank 0 ({} where rank 0 has {}); every "
        "process of a distributed sweep must be started with the same options and files",
        r, comm.size(), quote(theirs, i), quote(inputs, i));
  }
  verdict = comm.broadcast(verdict);
  if (!verdict.empty()) throw InputError("mpirun", verdict);
}

std::string encode_share(const Share& share) {
  Writer w;
  w.u8(share.cancelled ? 2 : share.error ? 1 : 0);
  if (share.cancelled) return w.take();
  if (share.error) {
    w.text(*share.error);
    return w.take();
  }
  w.u64(share.points.size());
  for (const EncodedPoint& p : share.points) {
    write_error(w, p.invalid);
    w.u64(p.rows.size());
    for (const auto& row : p.rows) {
      w.u64(row.size());
      for (const report::Cell& c : row) write_cell(w, c);
    }
  }
  return w.take();
}

Share decode_share(const std::string& bytes) {
  Reader r(bytes);
  Share share;
  if (const std::uint8_t kind = r.u8(); kind == 2) {
    share.cancelled = true;
  } else if (kind != 0) {
    share.error = r.text();
  } else {
    share.points.resize(r.count(2));
    for (EncodedPoint& p : share.points) {
      p.invalid = read_error(r);
      p.rows.resize(r.count(8));
      for (auto& row : p.rows) {
        row.resize(r.count(1));
        for (report::Cell& c : row) c = read_cell(r);
      }
    }
  }
  if (!r.done()) throw std::runtime_error("sweep share: trailing bytes");
  return share;
}

std::optional<GatheredSweep> run_distributed(const SweepOptions& opt, const SweepInputs& inputs,
                                             Communicator& comm, Split split) {
  const std::size_t n = inputs.points.size();
  const bool alltoall = opt.alltoall_bytes > 0;
  Share mine;
  try {
    const SweepResult r =
        evaluate_points(opt, inputs, share_of(n, comm.rank(), comm.size(), split));
    mine.points.reserve(r.points.size());
    for (const PointResult& p : r.points)
      mine.points.push_back({p.invalid, point_rows(p, opt.perf, alltoall)});
  } catch (const Cancelled&) {
    mine = Share{.error = std::nullopt, .points = {}, .cancelled = true};
  } catch (const std::exception& e) {
    mine = Share{.error = e.what(), .points = {}};
  }
  const std::vector<std::string> shares = comm.gather(encode_share(mine));
  if (comm.rank() != 0) return std::nullopt;
  mine = {};

  std::vector<EncodedPoint> points(n);
  for (int rank = 0; rank < comm.size(); ++rank) {
    Share s = decode_share(shares.at(static_cast<std::size_t>(rank)));
    if (s.cancelled) throw Cancelled(0);  // run inside agree: every rank stops
    if (s.error)
      throw std::runtime_error(fmt::format("rank {} of {}: {}", rank, comm.size(), *s.error));
    const std::vector<std::size_t> which = share_of(n, rank, comm.size(), split);
    if (s.points.size() != which.size())
      throw std::runtime_error(fmt::format("rank {} of {} sent {} points, expected {}", rank,
                                           comm.size(), s.points.size(), which.size()));
    for (std::size_t k = 0; k < which.size(); ++k) points[which[k]] = std::move(s.points[k]);
  }
  GatheredSweep g;
  std::vector<std::vector<report::Cell>> rows;
  rows.reserve(3 * n);
  for (EncodedPoint& p : points) {
    if (p.invalid) {
      if (!g.first_invalid) g.first_invalid = p.invalid;
    } else {
      ++g.valid_points;
    }
    for (auto& row : p.rows) rows.push_back(std::move(row));
  }
  g.table = sweep_table(std::move(rows), opt.perf, alltoall);
  return g;
}

}  // namespace railsim::sweep
