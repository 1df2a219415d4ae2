// Command chart draws the results of bench/cmd/compare (its -json file)
// as a PNG: one small bar chart per workload, the four implementations
// side by side, each bar labelled with its median. It is a module of its
// own so that its plotting dependencies stay out of srt's.
//
//	go run . -in results.json -out chart.png
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

type result struct {
	Workload string  `json:"workload"`
	Impl     string  `json:"impl"`
	Unit     string  `json:"unit"`
	Skipped  string  `json:"skipped"`
	Runs     int     `json:"runs"`
	Median   float64 `json:"median"`
	Label    string  `json:"label"` // the median as the driver prints it
}

type report struct {
	Date    string    `json:"date"`
	CPUs    int       `json:"cpus"`
	Kernel  string    `json:"kernel"`
	Runs    int       `json:"runs"`
	Results []*result `json:"results"`
}

// colours of the implementations, in the driver's order.
var palette = []color.Color{
	color.RGBA{0x9e, 0x9e, 0x9e, 0xff}, // bare
	color.RGBA{0x42, 0x85, 0xf4, 0xff}, // bwrap
	color.RGBA{0xdb, 0x44, 0x37, 0xff}, // reference srt
	color.RGBA{0x0f, 0x9d, 0x58, 0xff}, // srt-go
}

func main() {
	in := flag.String("in", "", "the JSON written by bench/cmd/compare -json")
	out := flag.String("out", "chart.png", "the PNG to write")
	flag.Parse()
	if err := draw1(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "chart:", err)
		os.Exit(1)
	}
}

func draw1(in, out string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	// Workloads and implementations in the order the driver ran them.
	var workloads, impls []string
	byKey := map[[2]string]*result{}
	for _, r := range rep.Results {
		if !contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
		if !contains(impls, r.Impl) {
			impls = append(impls, r.Impl)
		}
		byKey[[2]string{r.Workload, r.Impl}] = r
	}
	if len(workloads) == 0 {
		return fmt.Errorf("%s holds no results", in)
	}
	const cols = 3
	rows := (len(workloads) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for i, w := range workloads {
		p, err := panel(w, impls, byKey)
		if err != nil {
			return err
		}
		plots[i/cols][i%cols] = p
	}
	width, height := 15*vg.Centimeter*cols, 9*vg.Centimeter*vg.Length(rows)
	img := vgimg.New(width, height+vg.Centimeter)
	dc := draw.New(img)
	title := fmt.Sprintf("srt-go side by side — medians of %d runs, %d CPUs, %s, %s", rep.Runs, rep.CPUs, rep.Kernel, rep.Date)
	font := plot.DefaultFont
	font.Size = 14
	titleStyle := draw.TextStyle{Color: color.Black, Font: font, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter}
	dc.FillText(titleStyle, vg.Point{X: width / 2, Y: height + vg.Centimeter/3}, title)
	body := draw.Crop(dc, 0, 0, 0, -vg.Centimeter)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, tiles, body)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panel is one workload's chart: a bar per implementation, labelled with
// its median, or "skipped".
func panel(w string, impls []string, byKey map[[2]string]*result) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = w
	p.Title.TextStyle.Font.Size = 11
	top, unit := 0.0, ""
	for _, im := range impls {
		if r := byKey[[2]string{w, im}]; r != nil {
			top = math.Max(top, r.Median)
			unit = r.Unit
		}
	}
	p.Y.Label.Text = unit
	p.Y.Tick.Marker = plainTicks{}
	p.Y.Min, p.Y.Max = 0, top*1.2
	if top == 0 {
		p.Y.Max = 1
	}
	var labels []string
	var xys []plotter.XY
	for i, im := range impls {
		r := byKey[[2]string{w, im}]
		v, text := 0.0, "skipped"
		if r != nil && r.Runs > 0 {
			v, text = r.Median, r.Label
		}
		bar, err := plotter.NewBarChart(plotter.Values{v}, vg.Centimeter*1.6)
		if err != nil {
			return nil, err
		}
		bar.XMin = float64(i)
		bar.Color = palette[i%len(palette)]
		bar.LineStyle.Width = 0
		p.Add(bar)
		labels = append(labels, text)
		xys = append(xys, plotter.XY{X: float64(i), Y: v + top*0.02})
	}
	ls, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range ls.TextStyle {
		ls.TextStyle[i].XAlign = draw.XCenter
		ls.TextStyle[i].Font.Size = 9
	}
	p.Add(ls)
	p.NominalX(impls...)
	return p, nil
}

// plainTicks are gonum's default ticks labelled without trailing zeros
// (the default prints "250.00" on some ranges and "300" on others).
type plainTicks struct{}

func (plainTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
		}
	}
	return ticks
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
