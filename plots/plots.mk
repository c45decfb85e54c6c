# plots.mk -- the files of `make plots`, `make experiments` and `make
# report` as make rules.  A file is remade only when something it is made
# from is newer (the binary, its scenario, the script that makes it, the
# gnuplot scripts and palette), so `make reproduce` after `make plots`
# runs no simulation.  Each step prints one line, on a terminal or not:
#   plots: sweep 1b (1/11) -> plots/out/sweep_1b.csv
# The top-level Makefile runs this file after it has built bin/dilosim:
#   make -f plots/plots.mk [DILOSIM=/abs/dilosim] [PLOTS_OUT=dir] plots
# DILOSIM is a plain file here, with no rule (the build's rules live in
# the Makefile), so that `make -n` lists exactly what is out of date.
# Targets: plots (the sweeps and figures, seconds), experiments (the
# training runs of docs/experiments.md: the coupled runs of
# plots/coupled.sh and plots/compressors.sh, then scenarios/experiments/run.sh, about an hour; both
# resume), report (plots/out/report.html).

DILOSIM   ?= $(CURDIR)/bin/dilosim
PLOTS_OUT ?= plots/out
export PLOTS_OUT
O         := $(PLOTS_OUT)
PAPER     := scenarios/paper
PALETTE   := plots/palette.gp

.PHONY: plots experiments report
.SUFFIXES:
.DELETE_ON_ERROR:

# step WHAT N TOTAL [FILE]: the line of step N of TOTAL, making FILE
# (default: the target).
step = @echo "$(1) ($(2)/$(3)) -> $(or $(4),$@)"

PLOT_STEPS := 11
plot_step = $(call step,plots: $(1),$(2),$(PLOT_STEPS))

plots: $(O)/sweep_1b.csv $(O)/sweep_10b.csv $(O)/sweep_100b.csv \
       $(O)/layout_100b.csv $(O)/tau_100b.csv $(O)/figure4.png \
       $(O)/layout_100b.png $(O)/tau_100b.png $(O)/bytes.png \
       $(O)/loss_smoke.csv $(O)/loss_smoke.png
	@:

# The sweeps (plots/sweeps.sh NAME writes NAME.json, then NAME.csv).
$(O)/sweep_1b.csv: $(DILOSIM) $(PAPER)/1b.json plots/sweeps.sh
	$(call plot_step,sweep 1b,1)
	@plots/sweeps.sh "$(DILOSIM)" sweep_1b
$(O)/sweep_10b.csv: $(DILOSIM) $(PAPER)/10b.json plots/sweeps.sh
	$(call plot_step,sweep 10b,2)
	@plots/sweeps.sh "$(DILOSIM)" sweep_10b
$(O)/sweep_100b.csv: $(DILOSIM) $(PAPER)/100b.json plots/sweeps.sh
	$(call plot_step,sweep 100b,3)
	@plots/sweeps.sh "$(DILOSIM)" sweep_100b
$(O)/layout_100b.csv: $(DILOSIM) $(PAPER)/100b.json plots/sweeps.sh
	$(call plot_step,sweep layout 100b,4)
	@plots/sweeps.sh "$(DILOSIM)" layout_100b
$(O)/tau_100b.csv: $(DILOSIM) $(PAPER)/100b.json plots/sweeps.sh
	$(call plot_step,sweep tau 100b,5)
	@plots/sweeps.sh "$(DILOSIM)" tau_100b

SWEEPS := $(O)/sweep_1b.csv $(O)/sweep_10b.csv $(O)/sweep_100b.csv

# The figures (PNG, with the SVG beside it).
$(O)/figure4.png: $(SWEEPS) plots/figure4.gp $(PALETTE)
	$(call plot_step,figure 4,6)
	@gnuplot -e "dir='$(O)'" plots/figure4.gp
$(O)/layout_100b.png: $(O)/layout_100b.csv plots/studies.gp $(PALETTE)
	$(call plot_step,figure layout 100b,7)
	@gnuplot -e "dir='$(O)'; fig='layout'" plots/studies.gp
$(O)/tau_100b.png: $(O)/tau_100b.csv plots/studies.gp $(PALETTE)
	$(call plot_step,figure tau 100b,8)
	@gnuplot -e "dir='$(O)'; fig='tau'" plots/studies.gp
$(O)/bytes.png: $(SWEEPS) plots/studies.gp $(PALETTE)
	$(call plot_step,figure bytes,9)
	@gnuplot -e "dir='$(O)'; fig='bytes'" plots/studies.gp

# A tenth of a second of training: the three evaluations of one run.
$(O)/loss_smoke.csv: $(DILOSIM) scenarios/train/mlp_smoke.json
	$(call plot_step,train mlp_smoke,10)
	@mkdir -p $(O)
	@"$(DILOSIM)" train scenarios/train/mlp_smoke.json --quiet --out $@ >$(O)/loss_smoke.json
$(O)/loss_smoke.png: $(O)/loss_smoke.csv plots/loss.gp $(PALETTE)
	$(call plot_step,figure loss smoke,11)
	@gnuplot -e "files='$(O)/loss_smoke.csv'" \
	  -e "cols='eval_loss_outer_nats eval_loss_replica_nats eval_loss_average_nats'" \
	  -e "method='streaming_overlap_fp4'" -e "out='$(O)/loss_smoke'" plots/loss.gp

# The training runs: 14 coupled runs (a minute or a few), the compressor
# table's runs (a few minutes), then the 38 runs of the experiments (about
# an hour; the scripts resume an interrupted run).
EXP_STEPS := 4
exp_step = $(call step,experiments: $(1),$(2),$(EXP_STEPS),$(3))

experiments: $(O)/coupled_hours.png $(O)/compressors/results.md
	$(call exp_step,training runs of scenarios/experiments/markov.json,4,$(O)/experiments/)
	@scenarios/experiments/run.sh "$(DILOSIM)"

$(O)/coupled/results.csv: $(DILOSIM) scenarios/train/coupled.json plots/coupled.sh
	$(call exp_step,coupled runs of scenarios/train/coupled.json,1)
	@RUNS_ONLY=1 plots/coupled.sh "$(DILOSIM)"
$(O)/coupled_hours.png: $(O)/coupled/results.csv plots/coupled.sh plots/loss.gp \
                        $(PALETTE)
	$(call exp_step,figures of the coupled runs,2)
	@PLOTS_ONLY=1 plots/coupled.sh "$(DILOSIM)"

$(O)/compressors/results.md: $(DILOSIM) scenarios/train/compressors.json \
                             plots/compressors.sh
	$(call exp_step,the compressors of scenarios/train/compressors.json,3)
	@FORCE=1 plots/compressors.sh "$(DILOSIM)"

report: $(O)/report.html
	@:

$(O)/report.html: $(DILOSIM) $(PAPER)/1b.json $(PAPER)/10b.json $(PAPER)/100b.json
	$(call step,report: the three paper setups,1,1)
	@mkdir -p $(O)
	@"$(DILOSIM)" report $(PAPER)/1b.json $(PAPER)/10b.json $(PAPER)/100b.json \
	  --out $@
