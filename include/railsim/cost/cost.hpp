#pragma once
// Cost and power of a bill of materials under a catalog, and each design's saving against
// rail_optimized.
#include <string>
#include <string_view>
#include <vector>

#include "railsim/core/json_fwd.hpp"
#include "railsim/cost/bill_of_materials.hpp"
#include "railsim/cost/catalog.hpp"
#include "railsim/spec/switch.hpp"

namespace railsim::cost {

// Whole: every switch box is bought (a rail smaller than a switch still takes one).
// Ports: only cabled ports are paid for, as when several small rails share one partitioned
// switch (still no switch path between rails); gives the lower bound.
enum class SwitchCounting { whole, ports };
std::string_view to_string(SwitchCounting s);
SwitchCounting parse_switch_counting(std::string_view s,
                                     const std::string& option = "--switch-counting");

struct CostPower {
  double switches = 0;
  double transceivers = 0;
  double cables = 0;
  double total() const { return switches + transceivers + cables; }
};

struct DesignCost {
  CostPower usd;       // network cost (switches, transceivers, cables)
  CostPower watts;     // network power
  double nic_usd = 0;  // NICs: reported apart, identical in rail_optimized and rail_only
  double nic_w = 0;
  double cost_usd() const { return usd.total(); }
  double power_w() const { return watts.total(); }
};

// Watts of one switch box under a catalog: the preset's data-sheet figure (typical, without
// transceivers) when the switch has one and the catalog takes it (power_from "preset", the
// default); 0 when the catalog's own per-switch and per-port figures apply (docs/design.md
// section 4).
double switch_box_watts(const spec::SwitchSpec& sw, const Catalog& cat);

// box_w > 0: every switch box draws box_w watts (whole boxes, or switch equivalents by port
// counting), in place of the catalog's per-switch and per-port watts; prices are the catalog's.
// A catalog with co-packaged switch optics adds them to the switches' cost and power on every
// port paid for (ports bought, or cabled by port counting) and ignores bom's switch-side modules.
DesignCost price(const BillOfMaterials& bom, const Catalog& cat,
                 SwitchCounting counting = SwitchCounting::whole, double box_w = 0);

// One evaluated design: what to buy and what it costs.
struct DesignReport {
  BillOfMaterials bom;
  DesignCost cost;
  std::string switch_name;
  std::string catalog_name;
  SwitchCounting counting = SwitchCounting::whole;
  // Where the switch watts came from: box_w > 0 is the data sheet's figure per box (source
  // names it); 0 means the catalog's figures.
  double switch_box_w = 0;
  std::string switch_power_source;
  std::string switch_power_basis;  // one line for humans: "913 W per switch, typical ..."
  // Switch ports whose co-packaged optics are paid for (every port bought, or the cabled ones by
  // port counting); 0 when the catalog's switch-side optics are pluggable modules.
  std::int64_t co_packaged_ports = 0;
  double cost_saving = 0;  // fraction saved against rail_optimized (filled by compare)
  double power_saving = 0;

  // The network's cost and power over the GPUs it connects (NICs apart, as in cost).
  double cost_per_gpu_usd() const { return cost.cost_usd() / static_cast<double>(bom.gpus); }
  double power_per_gpu_w() const { return cost.power_w() / static_cast<double>(bom.gpus); }
};

// InputError naming --copper-gpu-leaf when the catalog's switch optics are co-packaged and the
// design has copper GPU-leaf links (a co-packaged port is fibre only).
DesignReport evaluate(const spec::Cluster& cluster, const spec::NetworkDesign& design,
                      const Catalog& cat, SwitchCounting counting = SwitchCounting::whole);

// rail_optimized, rail_only and ideal over one cluster, with savings against rail_optimized.
std::vector<DesignReport> compare_designs(const spec::Cluster& cluster,
                                          const spec::NetworkDesign& base, const Catalog& cat,
                                          SwitchCounting counting = SwitchCounting::whole);

// 1 - x / reference, 0 when the reference is 0.
double saving(double x, double reference);

// JSON of one design (docs/cli.md lists the fields).
Json to_json(const DesignReport& r, bool with_savings);
// The document `railsim design --json` prints and Python's design() returns: to_json(r, false)
// and the cluster's "gpu".
Json design_document(const spec::Cluster& cluster, const DesignReport& r);

}  // namespace railsim::cost
