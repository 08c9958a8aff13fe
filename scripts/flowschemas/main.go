// Command flowschemas prints Kubernetes' own bootstrap FlowSchemas (the mandatory
// ones, then the suggested ones) as a flowcontrol.apiserver.k8s.io/v1 FlowSchemaList
// in JSON, for ktop/model/data/bootstrap_flowschemas.json. See README.md.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

func main() {
	// The bootstrap package already declares them as k8s.io/api/flowcontrol/v1 objects,
	// so no conversion is needed: only the TypeMeta that kubectl would print is added.
	list := flowcontrolv1.FlowSchemaList{
		TypeMeta: metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchemaList"},
	}
	all := append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...)
	for _, fs := range all {
		item := *fs.DeepCopy()
		item.TypeMeta = metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchema"}
		list.Items = append(list.Items, item)
	}
	out, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
