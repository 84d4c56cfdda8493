#include "top_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <memory>
#include <variant>

#include "bloom_command.hpp"
#include "detail.hpp"
#include "duration.hpp"
#include "elect_command.hpp"
#include "errors.hpp"
#include "gate_command.hpp"
#include "history_command.hpp"
#include "inventory.hpp"
#include "limit_command.hpp"
#include "live.hpp"
#include "lock_command.hpp"
#include "ops_command.hpp"
#include "queue_command.hpp"
#include "sem_command.hpp"
#include "signal_command.hpp"
#include "signals.hpp"
#include "terminal.hpp"
#include "top_view.hpp"
#include "watch.hpp"

namespace rcoord::cmd {
namespace {

struct TopArgs {
  std::string pattern = "*";
  std::string type;
  Millis interval{1000};
};

// One pass into the board. Returns the pass (which masters it missed). `nodes` keeps a
// cluster's master connections from one pass to the next.
inventory::Pass refresh(Context& ctx, const TopArgs& args, live::Board& board,
                        inventory::Nodes* nodes = nullptr) {
  std::vector<inventory::Object> objects;
  auto pass = inventory::survey(
      ctx.conn(), ctx.keys(), {args.pattern, args.type, true},
      [&](inventory::Object& o) { objects.push_back(std::move(o)); }, nodes);
  board.update(std::move(objects), live::Clock::now());
  return pass;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

// What the type's status verb prints about the object (`rcoord lock status NAME`...); empty
// where it has none.
std::vector<std::string> status_lines(const inventory::Status& status) {
  return split_lines(std::visit(
      Overloaded{[](const std::monostate&) { return std::string(); },
                 [](const latch::Status& l) { return latch::to_text(latch::StatusView{l}); },
                 [](const auto& s) { return to_text(s); }},
      status));
}

// How many of an object's latest events its detail shows.
constexpr std::int64_t kDetailEvents = 10;

std::string clock_now() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%H:%M:%S", &local);
  return buf;
}

// The interactive view: refreshes every --interval, and between refreshes follows the keys and
// the window's size.
class TopScreen {
 public:
  TopScreen(Context& ctx, const TopArgs& args) : ctx_(ctx), args_(args), screen_(ctx.out()) {}

  // Returns 0 after `q`, Ctrl-C, SIGTERM or SIGHUP. A lost server or any other error is
  // thrown (the Screen puts the terminal back on the way out).
  int run() {
    for (;;) {
      try {
        pass_ = refresh(ctx_, args_, board_, &nodes_);
        if (detail_) read_detail();
      } catch (const Error& e) {
        if (e.code() == kInterrupted) return 0;
        throw;
      }
      refreshed_at_ = clock_now();
      select_rows();
      auto next = live::Clock::now() + args_.interval;
      for (;;) {
        draw();
        auto event = screen_.wait(next, input_);
        if (event == Screen::Event::kSignal) return 0;
        if (event == Screen::Event::kTimeout) break;
        if (event != Screen::Event::kInput) continue;
        auto keys = take_keys(input_, false);
        if (!input_.empty()) {
          // An escape sequence cut short, or the Escape key alone: what follows within a
          // moment belongs to it.
          screen_.wait(live::Clock::now() + Millis(30), input_);
          if (signals::pending() != 0) return 0;
          auto rest = take_keys(input_, true);
          keys.insert(keys.end(), rest.begin(), rest.end());
        }
        for (const auto& key : keys) {
          if (!handle(key)) return 0;
        }
      }
    }
  }

 private:
  // The rows the filter lets through, the selection kept on the same object.
  void select_rows() {
    rows_ = board_.rows(filter_);
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      if (live::key_of(rows_[i]->object) == selected_key_) {
        selected_ = i;
        break;
      }
    }
    if (selected_ >= rows_.size()) selected_ = rows_.empty() ? 0 : rows_.size() - 1;
    remember_selection();
  }

  void remember_selection() {
    if (!rows_.empty()) selected_key_ = live::key_of(rows_[selected_]->object);
  }

  void move(long by) {
    if (rows_.empty()) return;
    long to = static_cast<long>(selected_) + by;
    to = std::max(0L, std::min(to, static_cast<long>(rows_.size()) - 1));
    selected_ = static_cast<std::size_t>(to);
    remember_selection();
  }

  std::string title() const {
    std::string what = args_.type.empty() ? "objects" : args_.type + " objects";
    std::string shown = filter_.empty() || rows_.size() == board_.size()
                            ? std::string()
                            : fmt::format(" ({} shown)", rows_.size());
    std::string pattern =
        args_.pattern == "*" ? std::string() : " matching '" + args_.pattern + "'";
    return fmt::format("rcoord top  {}  {} {}{}{}  every {}  {}",
                       ctx_.settings().endpoint.describe(), board_.size(), what, pattern, shown,
                       format_duration(args_.interval), refreshed_at_);
  }

  std::string pass_message() const {
    if (pass_.unreachable.empty()) return {};
    return inventory::unreachable_error(pass_, "read").what();
  }

  void draw() {
    auto now = live::Clock::now();
    if (detail_) {
      top::DetailScreen d;
      d.title = title();
      d.type = detail_type_;
      d.name = detail_name_;
      for (const auto& row : board_.rows("")) {
        if (row->object.type == detail_type_ && row->object.name == detail_name_) d.row = row;
      }
      d.status = detail_status_;
      d.history = detail_history_;
      d.message = detail_message_;
      d.now = now;
      screen_.draw(top::render_detail(d, screen_.cols(), screen_.rows()));
      return;
    }
    top::ListScreen l;
    l.title = title();
    l.rows = rows_;
    l.selected = selected_;
    first_ = top::scroll(first_, selected_, top::visible_rows(screen_.rows()), rows_.size());
    l.first = first_;
    l.filter = filter_;
    l.editing = editing_;
    l.message = pass_message();
    l.now = now;
    screen_.draw(top::render_list(l, screen_.cols(), screen_.rows()));
  }

  // The detail of the chosen object: its type's status, then its latest events.
  void read_detail() {
    detail_message_.clear();
    try {
      auto detail = inventory::read_detail(ctx_.conn(), ctx_.keys(), detail_type_, detail_name_,
                                           kDetailEvents);
      detail_status_ = status_lines(detail.status);
      detail_history_.clear();
      for (const auto& e : detail.events) detail_history_.push_back(history_line(e));
    } catch (const Error& e) {
      if (e.code() != kServer) throw;
      detail_status_.clear();
      detail_history_.clear();
      detail_message_ = fmt::format("cannot read its status: {}", e.what());
    }
  }

  // False: quit.
  bool handle(const KeyPress& key) {
    if (editing_) return edit_filter(key);
    if (key.key == Key::kChar && (key.ch == 'q' || key.ch == 'Q')) return false;
    if (detail_) {
      if (key.key == Key::kEscape || key.key == Key::kEnter || key.key == Key::kBackspace ||
          key.key == Key::kLeft || (key.key == Key::kChar && key.ch == 'h')) {
        detail_ = false;
      }
      return true;
    }
    long page = static_cast<long>(top::visible_rows(screen_.rows()));
    switch (key.key) {
      case Key::kUp:
        move(-1);
        break;
      case Key::kDown:
        move(1);
        break;
      case Key::kPageUp:
        move(-page);
        break;
      case Key::kPageDown:
        move(page);
        break;
      case Key::kHome:
        move(-static_cast<long>(rows_.size()));
        break;
      case Key::kEnd:
        move(static_cast<long>(rows_.size()));
        break;
      case Key::kEnter:
        open_detail();
        break;
      case Key::kEscape:
        filter_.clear();
        select_rows();
        break;
      case Key::kChar:
        if (key.ch == 'j') move(1);
        if (key.ch == 'k') move(-1);
        if (key.ch == 'g') move(-static_cast<long>(rows_.size()));
        if (key.ch == 'G') move(static_cast<long>(rows_.size()));
        if (key.ch == '/') editing_ = true;
        break;
      default:
        break;
    }
    return true;
  }

  bool edit_filter(const KeyPress& key) {
    switch (key.key) {
      case Key::kChar:
        filter_ += key.ch;
        break;
      case Key::kBackspace:
        if (!filter_.empty()) filter_.pop_back();
        // A UTF-8 character goes whole: drop its continuation bytes' lead too.
        while (!filter_.empty() && (static_cast<unsigned char>(filter_.back()) & 0xc0) == 0x80) {
          filter_.pop_back();
        }
        break;
      case Key::kEnter:
        editing_ = false;
        break;
      case Key::kEscape:
        filter_.clear();
        editing_ = false;
        break;
      case Key::kUp:
        move(-1);
        return true;
      case Key::kDown:
        move(1);
        return true;
      default:
        return true;
    }
    select_rows();
    return true;
  }

  void open_detail() {
    if (rows_.empty()) return;
    detail_ = true;
    detail_type_ = rows_[selected_]->object.type;
    detail_name_ = rows_[selected_]->object.name;
    try {
      read_detail();
    } catch (const Error& e) {
      if (e.code() != kInterrupted) throw;
    }
  }

  Context& ctx_;
  const TopArgs& args_;
  Screen screen_;
  live::Board board_;
  inventory::Nodes nodes_;  ///< a cluster's masters, connected once for every refresh
  inventory::Pass pass_;
  std::string refreshed_at_;
  std::vector<const live::Row*> rows_;
  std::size_t selected_ = 0;
  std::size_t first_ = 0;
  std::string selected_key_;
  std::string filter_;
  bool editing_ = false;
  std::string input_;
  bool detail_ = false;
  std::string detail_type_;
  std::string detail_name_;
  std::vector<std::string> detail_status_;
  std::vector<std::string> detail_history_;
  std::string detail_message_;
};

// The same object as `ls -o json` shows it.
nlohmann::ordered_json row_json(const live::Row& row) {
  nlohmann::ordered_json j;
  inventory::to_json(j, row.object);
  return j;
}

// Stdout is not a terminal (or -o json, or -q): one pass, printed as a table (or JSON Lines)
// in the order the screen would show; exit 1 when nothing matched, 3 after the rest when a
// cluster master was missed.
int snapshot(Context& ctx, const TopArgs& args) {
  live::Board board;
  auto pass = refresh(ctx, args, board);
  auto rows = board.rows("");
  if (ctx.out().json()) {
    for (const auto* row : rows) ctx.out().write_json(row_json(*row));
  } else if (!rows.empty()) {
    std::string text;
    for (const auto& line : top::snapshot_lines(rows, live::Clock::now())) text += line + '\n';
    ctx.out().write_text(text);
  }
  if (!pass.unreachable.empty()) throw inventory::unreachable_error(pass, "read");
  if (rows.empty()) ctx.out().note("rcoord: no objects match");
  return rows.empty() ? 1 : 0;
}

bool full_screen(Context& ctx) {
  if (isatty(STDOUT_FILENO) == 0 || ctx.out().json() || ctx.out().quiet()) return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && std::string_view(term) != "dumb";
}

}  // namespace

void add_top(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<TopArgs>();
  auto* top = app.add_subcommand(
      "top", "Watch the objects rcoord keeps, full screen, most recently changed first");
  top->add_option("pattern", args->pattern, "Glob over whole object names (default *)");
  add_type_option(top, args->type);
  add_duration(top, "--interval", args->interval, "Refresh every DUR (default 1s, at least 100ms)",
               kRefreshBounds);
  top->footer(
      "Keys: q quits, / filters by name (Enter keeps the filter, Esc clears it), arrows or\n"
      "j/k move, Enter shows the chosen object's status (Esc goes back). A change is any change\n"
      "of state other than a countdown: a new holder, leader, waiter, count or fence.\n"
      "When stdout is not a terminal (or with -o json) it prints one snapshot and exits.\n"
      "Examples:\n"
      "  rcoord top\n"
      "  rcoord top 'deploy-*' --type lock --interval 500ms\n"
      "  rcoord top --type queue | head");
  top->callback([&ctx, args] {
    ctx.action = [&ctx, args] {
      if (!full_screen(ctx)) return snapshot(ctx, *args);
      TopScreen screen(ctx, *args);
      return screen.run();
    };
  });
}

}  // namespace rcoord::cmd
