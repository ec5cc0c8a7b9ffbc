// Command check reads Kubernetes manifests (multi-document YAML files, "-" for standard input) and decodes
// every object with client-go's scheme and a strict decoder, offline: a field the Kubernetes API does not
// have, a field given twice, a value of the wrong type or a kind the API does not know is an error. It then
// checks a few things the API server or the kubelet would refuse later (a Deployment whose selector misses
// its pod labels, a mount or probe naming a volume or port the pod does not declare) and prints one line per
// object with what a reader of the deployment wants to see (replicas, probes, selectors, ports).
//
// Exit status: 0 when every object passed, 1 when any did not, 2 on a usage or read error.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/scheme"
)

func main() {
	configDir := flag.String("write-config", "",
		"also write the sparkgate.yaml of every ConfigMap that has one to this directory, as FILE-CONFIGMAP.yaml")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: check [-write-config DIR] FILE.yaml... (- for standard input)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	// EnableStrict makes the JSON and YAML decoders report unknown and duplicate fields; without it they
	// are dropped silently, which is exactly the mistake this program exists to catch.
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	failed := false
	for _, file := range flag.Args() {
		docs, err := documents(file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", file, err)
			os.Exit(2)
		}
		if len(docs) == 0 {
			fmt.Printf("%s: FAIL no Kubernetes object in the file\n", file)
			failed = true
		}
		for _, doc := range docs {
			where := fmt.Sprintf("%s:%d", file, doc.line)
			obj, _, err := decoder.Decode(doc.data, nil, nil)
			if err != nil {
				// Strict errors come back together with the object; either way the document is wrong. One line per
				// object, also for the YAML reader's multi-line messages.
				fmt.Printf("%s: FAIL %s\n", where, strings.Join(strings.Fields(err.Error()), " "))
				failed = true
				continue
			}
			summary, problems := inspect(obj)
			if len(problems) > 0 {
				fmt.Printf("%s: FAIL %s: %s\n", where, summary, strings.Join(problems, "; "))
				failed = true
				continue
			}
			fmt.Printf("%s: ok %s\n", where, summary)
			if *configDir != "" {
				if err := writeConfig(*configDir, file, obj); err != nil {
					fmt.Fprintf(os.Stderr, "%s: %v\n", where, err)
					os.Exit(2)
				}
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

type document struct {
	line int
	data []byte
}

// documents splits a multi-document YAML file at its "---" lines, dropping documents that hold only
// comments (helm template prints a "# Source:" comment before each object, and nothing where a template
// renders nothing). Each document keeps the line its first content is on, for the messages.
func documents(file string) ([]document, error) {
	var in io.Reader = os.Stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		in = f
	}
	var docs []document
	var current bytes.Buffer
	first := 0
	flush := func() {
		if first > 0 {
			docs = append(docs, document{line: first, data: append([]byte(nil), current.Bytes()...)})
		}
		current.Reset()
		first = 0
	}
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		if separator.MatchString(line) {
			flush()
			continue
		}
		if t := strings.TrimSpace(line); first == 0 && t != "" && !strings.HasPrefix(t, "#") {
			first = n
		}
		current.WriteString(line)
		current.WriteByte('\n')
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	flush()
	return docs, nil
}

var separator = regexp.MustCompile(`^---\s*(#.*)?$`)

// inspect returns a one-line summary of the object and what the API server or the kubelet would refuse.
func inspect(obj runtime.Object) (string, []string) {
	summary, problems := describe(obj)
	if m, err := meta.Accessor(obj); err == nil {
		problems = append(problems, objectMeta(m)...)
	}
	return summary, problems
}

func describe(obj runtime.Object) (string, []string) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return deployment(o)
	case *corev1.Service:
		return service(o), nil
	case *policyv1.PodDisruptionBudget:
		return fmt.Sprintf("PodDisruptionBudget/%s minAvailable=%s maxUnavailable=%s selector=%s",
			o.Name, intOrString(o.Spec.MinAvailable), intOrString(o.Spec.MaxUnavailable),
			selector(o.Spec.Selector)), nil
	case *networkingv1.NetworkPolicy:
		return networkPolicy(o), nil
	case *corev1.ConfigMap:
		keys := make([]string, 0, len(o.Data))
		for k := range o.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Sprintf("ConfigMap/%s data=%s", o.Name, strings.Join(keys, ",")), nil
	default:
		m, err := meta.Accessor(obj)
		if err != nil {
			return obj.GetObjectKind().GroupVersionKind().Kind, nil
		}
		return obj.GetObjectKind().GroupVersionKind().Kind + "/" + m.GetName(), nil
	}
}

// objectMeta checks what the API server checks of every object's name and labels.
func objectMeta(m metav1.Object) []string {
	var problems []string
	if m.GetName() == "" {
		problems = append(problems, "metadata.name is empty")
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(m.GetName()) {
			problems = append(problems, "metadata.name: "+msg)
		}
	}
	return append(problems, labelProblems("metadata.labels", m.GetLabels())...)
}

func labelProblems(where string, l map[string]string) []string {
	var problems []string
	for k, v := range l {
		for _, msg := range validation.IsQualifiedName(k) {
			problems = append(problems, fmt.Sprintf("%s key %q: %s", where, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			problems = append(problems, fmt.Sprintf("%s[%s] %q: %s", where, k, v, msg))
		}
	}
	return problems
}

func deployment(d *appsv1.Deployment) (string, []string) {
	spec := d.Spec.Template.Spec
	problems := labelProblems("spec.template.metadata.labels", d.Spec.Template.Labels)
	replicas := "default(1)"
	if d.Spec.Replicas != nil {
		replicas = fmt.Sprint(*d.Spec.Replicas)
	}
	if d.Spec.Selector == nil {
		problems = append(problems, "spec.selector is missing")
	} else {
		for k, v := range d.Spec.Selector.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				problems = append(problems, fmt.Sprintf("selector %s=%s does not match the pod template's labels", k, v))
			}
		}
	}
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			problems = append(problems, fmt.Sprintf("volume %q: %s", v.Name, msg))
		}
		// Every field of VolumeSource is a pointer, one per kind of volume; the API takes exactly one. Values
		// merged from two places (a default emptyDir and a claim) give two, which decoding cannot see.
		if n := sources(v.VolumeSource); n != 1 {
			problems = append(problems, fmt.Sprintf("volume %q has %d sources; it must have exactly one", v.Name, n))
		}
	}
	grace := "default(30)"
	if spec.TerminationGracePeriodSeconds != nil {
		grace = fmt.Sprint(*spec.TerminationGracePeriodSeconds)
	}
	parts := []string{fmt.Sprintf("Deployment/%s replicas=%s terminationGracePeriodSeconds=%s", d.Name, replicas, grace)}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		ports := map[string]bool{}
		var declared []string
		for _, p := range c.Ports {
			if p.Name != "" {
				ports[p.Name] = true
				for _, msg := range validation.IsValidPortName(p.Name) {
					problems = append(problems, fmt.Sprintf("container %s port name %q: %s", c.Name, p.Name, msg))
				}
			}
			declared = append(declared, fmt.Sprintf("%s:%d", p.Name, p.ContainerPort))
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				problems = append(problems, fmt.Sprintf("container %s mounts volume %q that the pod does not declare", c.Name, m.Name))
			}
		}
		var mounts []string
		for _, m := range c.VolumeMounts {
			mounts = append(mounts, m.MountPath)
		}
		parts = append(parts, fmt.Sprintf("container=%s ports=%s mounts=%s", c.Name, strings.Join(declared, ","), strings.Join(mounts, ",")))
		for _, p := range []struct {
			kind  string
			probe *corev1.Probe
		}{{"readiness", c.ReadinessProbe}, {"liveness", c.LivenessProbe}, {"startup", c.StartupProbe}} {
			if p.probe == nil {
				continue
			}
			desc, port := probe(p.probe)
			parts = append(parts, p.kind+"="+desc)
			if port != "" && !ports[port] {
				problems = append(problems, fmt.Sprintf("container %s: %s probe names port %q that the container does not declare", c.Name, p.kind, port))
			}
		}
	}
	return strings.Join(parts, " "), problems
}

// probe describes a probe and returns the port name it uses, if it names one.
func probe(p *corev1.Probe) (string, string) {
	switch {
	case p.HTTPGet != nil:
		scheme := p.HTTPGet.Scheme
		if scheme == "" {
			scheme = corev1.URISchemeHTTP
		}
		return fmt.Sprintf("%s:GET:%s:%s", scheme, p.HTTPGet.Path, p.HTTPGet.Port.String()), p.HTTPGet.Port.StrVal
	case p.GRPC != nil:
		return fmt.Sprintf("grpc:%d", p.GRPC.Port), ""
	case p.TCPSocket != nil:
		return "tcp:" + p.TCPSocket.Port.String(), p.TCPSocket.Port.StrVal
	case p.Exec != nil:
		return "exec:" + strings.Join(p.Exec.Command, "_"), ""
	}
	return "none", ""
}

func service(s *corev1.Service) string {
	var ports []string
	for _, p := range s.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s:%d->%s", p.Name, p.Port, p.TargetPort.String()))
	}
	typ := string(s.Spec.Type)
	if typ == "" {
		typ = "default(ClusterIP)"
	}
	return fmt.Sprintf("Service/%s type=%s selector=%s ports=%s", s.Name, typ, labels(s.Spec.Selector), strings.Join(ports, ","))
}

func networkPolicy(n *networkingv1.NetworkPolicy) string {
	var types []string
	for _, t := range n.Spec.PolicyTypes {
		types = append(types, string(t))
	}
	parts := []string{fmt.Sprintf("NetworkPolicy/%s pods=%s types=%s", n.Name, labels(n.Spec.PodSelector.MatchLabels), strings.Join(types, ","))}
	for _, rule := range n.Spec.Ingress {
		var from, ports []string
		for _, peer := range rule.From {
			switch {
			case peer.PodSelector != nil && peer.NamespaceSelector != nil:
				from = append(from, "ns("+labels(peer.NamespaceSelector.MatchLabels)+")/"+labels(peer.PodSelector.MatchLabels))
			case peer.PodSelector != nil:
				from = append(from, labels(peer.PodSelector.MatchLabels))
			case peer.NamespaceSelector != nil:
				from = append(from, "ns("+labels(peer.NamespaceSelector.MatchLabels)+")")
			case peer.IPBlock != nil:
				from = append(from, peer.IPBlock.CIDR)
			}
		}
		for _, p := range rule.Ports {
			if p.Port != nil {
				ports = append(ports, p.Port.String())
			}
		}
		parts = append(parts, fmt.Sprintf("ingress-from=%s ports=%s", strings.Join(from, "|"), strings.Join(ports, ",")))
	}
	return strings.Join(parts, " ")
}

func labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, k+"="+m[k])
	}
	if len(out) == 0 {
		return "{}"
	}
	return strings.Join(out, ",")
}

func intOrString(v *intstr.IntOrString) string {
	if v == nil {
		return "unset"
	}
	return v.String()
}

func writeConfig(dir, file string, obj runtime.Object) error {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok || cm.Data["sparkgate.yaml"] == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	return os.WriteFile(filepath.Join(dir, base+"-"+cm.Name+".yaml"), []byte(cm.Data["sparkgate.yaml"]), 0o644)
}

func sources(v corev1.VolumeSource) int {
	n := 0
	fields := reflect.ValueOf(v)
	for i := 0; i < fields.NumField(); i++ {
		if !fields.Field(i).IsNil() {
			n++
		}
	}
	return n
}

func selector(s *metav1.LabelSelector) string {
	if s == nil {
		return "none"
	}
	return labels(s.MatchLabels)
}
